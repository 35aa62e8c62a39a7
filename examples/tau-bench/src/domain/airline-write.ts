/**
 * Airline write tools (BEHAVIOUR.md §5): pure functions over an {@link AirlineDb}, mutating it and
 * returning the reference output string (`send_certificate` may return `null`, Python's `None`).
 */
import type { AirlineDb } from "./database.ts";
import {
  deepCopy,
  dict,
  getDict,
  getKey,
  getList,
  keyError,
  type PyDict,
  type PyNumber,
  pyDumps,
  pyStr,
} from "./py-json.ts";
import { add, maxZero, mul, neg, num, sub, val } from "./py-number.ts";
import { argDictList, argNum, argStr, getNum, getStr, lookup, paymentMethods, type ToolFn } from "./tool-kit.ts";

/** New reservation ids, tried in order (§5.1 step 2). */
const NEW_RESERVATION_IDS = ["HATHAT", "HATHAU", "HATHAV"] as const;
/** Certificate ids, tried in order (§5.3). */
const CERTIFICATE_IDS = ["certificate_3221322", "certificate_3221323", "certificate_3221324"] as const;

/**
 * Validates and prices one flight entry in place (§5.1 step 4): sets `price`, `origin`, `destination`
 * and returns `price` (or the error output).
 */
function priceFlight(db: AirlineDb, entry: PyDict, cabin: string, passengers: number): PyNumber | string {
  const fn = pyStr(getKey(entry, "flight_number"));
  const flight = db.flights.get(fn);
  if (!flight) return `Error: flight ${fn} not found`;
  const date = pyStr(getKey(entry, "date"));
  const day = getDict(flight, "dates").get(date);
  if (!(day instanceof Map)) return `Error: flight ${fn} not found on date ${date}`;
  if (day.get("status") !== "available") return `Error: flight ${fn} not available on date ${date}`;
  const seats = getDict(day, "available_seats").get(cabin);
  if (seats === undefined) throw keyError(cabin);
  if (val(num(seats)) < passengers) return `Error: not enough seats on flight ${fn}`;
  const price = num(getKey(getDict(day, "prices"), cabin));
  entry.set("price", price);
  entry.set("origin", getKey(flight, "origin"));
  entry.set("destination", getKey(flight, "destination"));
  return price;
}

/** §5.1 `book_reservation(...)` */
export const bookReservation: ToolFn<AirlineDb> = (db, args) => {
  const userId = argStr(args, "user_id");
  const cabin = argStr(args, "cabin");
  const flights = deepCopy(argDictList(args, "flights"));
  const passengers = deepCopy(argDictList(args, "passengers"));
  const payments = deepCopy(argDictList(args, "payment_methods"));
  const nonfree = argNum(args, "nonfree_baggages");
  const user0 = db.users.get(userId);
  if (!user0) return "Error: user not found";
  const id = NEW_RESERVATION_IDS.find((r) => !db.reservations.has(r)) ?? "HATHAV";
  const reservation = dict([
    ["reservation_id", id],
    ["user_id", userId],
    ["origin", deepCopy(getKey(args, "origin"))],
    ["destination", deepCopy(getKey(args, "destination"))],
    ["flight_type", deepCopy(getKey(args, "flight_type"))],
    ["cabin", cabin],
    ["flights", flights],
    ["passengers", passengers],
    ["payment_history", payments],
    ["created_at", "2024-05-15T15:00:00"],
    ["total_baggages", deepCopy(getKey(args, "total_baggages"))],
    ["nonfree_baggages", nonfree],
    ["insurance", deepCopy(getKey(args, "insurance"))],
  ]);
  const n = passengers.length;
  let total: PyNumber = 0;
  for (const entry of flights) {
    const price = priceFlight(db, entry, cabin, n);
    if (typeof price === "string") return price;
    total = add(total, mul(price, n));
  }
  if (args.get("insurance") === "yes") total = add(total, 30 * n);
  total = add(total, mul(50, nonfree));
  const methods0 = paymentMethods(user0);
  for (const p of payments) {
    const pid = pyStr(getKey(p, "payment_id"));
    const method = methods0.get(pid);
    if (!(method instanceof Map)) return `Error: payment method ${pid} not found`;
    const source = method.get("source");
    if (
      (source === "gift_card" || source === "certificate") &&
      val(getNum(method, "amount")) < val(getNum(p, "amount"))
    ) {
      return `Error: not enough balance in payment method ${pid}`;
    }
  }
  let paid: PyNumber = 0;
  for (const p of payments) paid = add(paid, getNum(p, "amount"));
  if (val(paid) !== val(total)) {
    return `Error: payment amount does not add up, total price is ${pyStr(total)}, but paid ${pyStr(paid)}`;
  }
  const user = db.users.mut(userId) as PyDict;
  const methods = paymentMethods(user);
  for (const p of payments) {
    const pid = pyStr(getKey(p, "payment_id"));
    const method = lookup(methods, pid);
    const source = method.get("source");
    if (source === "gift_card") method.set("amount", sub(getNum(method, "amount"), getNum(p, "amount")));
    else if (source === "certificate") methods.delete(pid);
  }
  db.reservations.set(id, reservation);
  getList(user, "reservations").push(id);
  return pyDumps(reservation);
};

/** §5.2 `cancel_reservation(reservation_id)` */
export const cancelReservation: ToolFn<AirlineDb> = (db, args) => {
  const reservation = db.reservations.mut(argStr(args, "reservation_id"));
  if (!reservation) return "Error: reservation not found";
  const history = getList(reservation, "payment_history");
  const refunds = history.map((p) =>
    dict([
      ["payment_id", getKey(p, "payment_id")],
      ["amount", neg(getNum(p, "amount"))],
    ]),
  );
  history.push(...refunds);
  reservation.set("status", "cancelled");
  return pyDumps(reservation);
};

/** §5.3 `send_certificate(user_id, amount)`; `null` when the user already has all three certificates. */
export const sendCertificate: ToolFn<AirlineDb> = (db, args) => {
  const userId = argStr(args, "user_id");
  const amount = argNum(args, "amount");
  if (!db.users.has(userId)) return "Error: user not found";
  const free = CERTIFICATE_IDS.find((c) => !paymentMethods(db.users.get(userId) as PyDict).has(c));
  if (free === undefined) return null;
  paymentMethods(db.users.mut(userId) as PyDict).set(
    free,
    dict([
      ["source", "certificate"],
      ["amount", amount],
      ["id", free],
    ]),
  );
  return `Certificate ${free} added to user ${userId} with amount ${pyStr(amount)}.`;
};

/** The owner's payment method for an update tool, or the error output (§5.4 steps 3–4, §5.5 steps 4–5). */
function updateMethod(db: AirlineDb, reservation: PyDict, paymentId: string): PyDict | string {
  const owner = db.users.get(getStr(reservation, "user_id"));
  if (!owner) throw keyError(getStr(reservation, "user_id"));
  const method = paymentMethods(owner).get(paymentId);
  if (!(method instanceof Map)) return "Error: payment method not found";
  if (method.get("source") === "certificate") return "Error: certificate cannot be used to update reservation";
  return method;
}

/** Deducts `amount` from the owner's gift card `paymentId` (cloning the owner on write). */
function debitGiftCard(db: AirlineDb, reservation: PyDict, paymentId: string, amount: PyNumber): void {
  const owner = db.users.mut(getStr(reservation, "user_id")) as PyDict;
  const method = lookup(paymentMethods(owner), paymentId);
  method.set("amount", sub(getNum(method, "amount"), amount));
}

/** §5.4 `update_reservation_baggages(reservation_id, total_baggages, nonfree_baggages, payment_id)` */
export const updateReservationBaggages: ToolFn<AirlineDb> = (db, args) => {
  const reservationId = argStr(args, "reservation_id");
  const total = argNum(args, "total_baggages");
  const nonfree = argNum(args, "nonfree_baggages");
  const paymentId = argStr(args, "payment_id");
  const current = db.reservations.get(reservationId);
  if (!current) return "Error: reservation not found";
  const fee = mul(50, maxZero(sub(nonfree, getNum(current, "nonfree_baggages"))));
  const method = updateMethod(db, current, paymentId);
  if (typeof method === "string") return method;
  const isGift = method.get("source") === "gift_card";
  if (isGift && val(getNum(method, "amount")) < val(fee)) return "Error: gift card balance is not enough";
  const reservation = db.reservations.mut(reservationId) as PyDict;
  reservation.set("total_baggages", total);
  reservation.set("nonfree_baggages", nonfree);
  if (isGift) debitGiftCard(db, reservation, paymentId, fee);
  if (val(fee) !== 0) {
    getList(reservation, "payment_history").push(
      dict([
        ["payment_id", paymentId],
        ["amount", fee],
      ]),
    );
  }
  return pyDumps(reservation);
};

/** §5.5 `update_reservation_flights(reservation_id, cabin, flights, payment_id)` */
export const updateReservationFlights: ToolFn<AirlineDb> = (db, args) => {
  const reservationId = argStr(args, "reservation_id");
  const cabin = argStr(args, "cabin");
  const flights = deepCopy(argDictList(args, "flights"));
  const paymentId = argStr(args, "payment_id");
  const current = db.reservations.get(reservationId);
  if (!current) return "Error: reservation not found";
  const n = getList(current, "passengers").length;
  const existing = getList(current, "flights");
  let total: PyNumber = 0;
  for (const entry of flights) {
    const kept =
      cabin === current.get("cabin")
        ? existing.find(
            (f) => getKey(f, "flight_number") === entry.get("flight_number") && getKey(f, "date") === entry.get("date"),
          )
        : undefined;
    if (kept instanceof Map) {
      const price = getNum(kept, "price");
      entry.set("price", price);
      entry.set("origin", getKey(kept, "origin"));
      entry.set("destination", getKey(kept, "destination"));
      total = add(total, mul(price, n));
      continue;
    }
    const price = priceFlight(db, entry, cabin, n);
    if (typeof price === "string") return price;
    total = add(total, mul(price, n));
  }
  let oldSum: PyNumber = 0;
  for (const f of existing) oldSum = add(oldSum, getNum(f, "price"));
  total = sub(total, mul(oldSum, n));
  const method = updateMethod(db, current, paymentId);
  if (typeof method === "string") return method;
  const isGift = method.get("source") === "gift_card";
  if (isGift && val(getNum(method, "amount")) < val(total)) return "Error: gift card balance is not enough";
  const reservation = db.reservations.mut(reservationId) as PyDict;
  if (isGift) debitGiftCard(db, reservation, paymentId, total);
  reservation.set("flights", flights);
  if (val(total) !== 0) {
    getList(reservation, "payment_history").push(
      dict([
        ["payment_id", paymentId],
        ["amount", total],
      ]),
    );
  }
  return pyDumps(reservation);
};

/** §5.6 `update_reservation_passengers(reservation_id, passengers)` */
export const updateReservationPassengers: ToolFn<AirlineDb> = (db, args) => {
  const reservationId = argStr(args, "reservation_id");
  const passengers = deepCopy(argDictList(args, "passengers"));
  const current = db.reservations.get(reservationId);
  if (!current) return "Error: reservation not found";
  if (passengers.length !== getList(current, "passengers").length) return "Error: number of passengers does not match";
  const reservation = db.reservations.mut(reservationId) as PyDict;
  reservation.set("passengers", passengers);
  return pyDumps(reservation);
};
