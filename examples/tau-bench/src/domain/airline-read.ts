/** Airline read tools (BEHAVIOUR.md §6.2): pure functions over an {@link AirlineDb}. */
import type { AirlineDb } from "./database.ts";
import { getDict, keyError, type PyDict, PyError, type PyValue, pyDumps, pyReprStr } from "./py-json.ts";
import { argStr, getStr, type ToolFn } from "./tool-kit.ts";

/** The fixed output of `list_all_airports()`. */
export const ALL_AIRPORTS =
  '{"SFO": "San Francisco", "JFK": "New York", "LAX": "Los Angeles", "ORD": "Chicago", "DFW": "Dallas", "DEN": "Denver", "SEA": "Seattle", "ATL": "Atlanta", "MIA": "Miami", "BOS": "Boston", "PHX": "Phoenix", "IAH": "Houston", "LAS": "Las Vegas", "MCO": "Orlando", "EWR": "Newark", "CLT": "Charlotte", "MSP": "Minneapolis", "DTW": "Detroit", "PHL": "Philadelphia", "LGA": "LaGuardia"}';

/** `get_reservation_details(reservation_id)` (a missing reservation says `user not found`, sic). */
export const getReservationDetails: ToolFn<AirlineDb> = (db, args) => {
  const r = db.reservations.get(argStr(args, "reservation_id"));
  return r ? pyDumps(r) : "Error: user not found";
};

/** `get_user_details(user_id)` */
export const getAirlineUserDetails: ToolFn<AirlineDb> = (db, args) => {
  const u = db.users.get(argStr(args, "user_id"));
  return u ? pyDumps(u) : "Error: user not found";
};

/** `list_all_airports()` */
export const listAllAirports: ToolFn<AirlineDb> = () => ALL_AIRPORTS;

/** The flight without `dates`, followed by the keys of one day's record (and optionally `date`). */
function flightOnDay(flight: PyDict, day: PyDict, date?: string): PyDict {
  const out: PyDict = new Map();
  for (const [k, v] of flight) if (k !== "dates") out.set(k, v);
  for (const [k, v] of day) out.set(k, v);
  if (date !== undefined) out.set("date", date);
  return out;
}

/** `search_direct_flight(origin, destination, date)` */
export const searchDirectFlight: ToolFn<AirlineDb> = (db, args) => {
  const origin = argStr(args, "origin");
  const destination = argStr(args, "destination");
  const date = argStr(args, "date");
  const found: PyValue[] = [];
  for (const flight of db.flights.values()) {
    if (flight.get("origin") !== origin || flight.get("destination") !== destination) continue;
    const day = getDict(flight, "dates").get(date);
    if (day instanceof Map && day.get("status") === "available") found.push(flightOnDay(flight, day));
  }
  return pyDumps(found);
};

/** Python `int(s)` for the day-of-month suffix, raising its ValueError text. */
function pyInt(s: string): number {
  if (!/^\s*[+-]?\d+(?:_\d+)*\s*$/.test(s))
    throw new PyError(`invalid literal for int() with base 10: ${pyReprStr(s)}`);
  return Number.parseInt(s.trim().replaceAll("_", ""), 10);
}

/** `search_onestop_flight(origin, destination, date)` (including the second-leg day bug, §6.2). */
export const searchOnestopFlight: ToolFn<AirlineDb> = (db, args) => {
  const origin = argStr(args, "origin");
  const destination = argStr(args, "destination");
  const date = argStr(args, "date");
  const found: PyValue[] = [];
  for (const f1 of db.flights.values()) {
    if (f1.get("origin") !== origin) continue;
    for (const f2 of db.flights.values()) {
      if (f2.get("destination") !== destination || f2.get("origin") !== f1.get("destination")) continue;
      const arrival = getStr(f1, "scheduled_arrival_time_est");
      const d2 = arrival.includes("+1") ? `2024-05-${pyInt(date.slice(-2)) + 1}` : date;
      if (arrival > getStr(f2, "scheduled_departure_time_est")) continue;
      const days1 = getDict(f1, "dates");
      const days2 = getDict(f2, "dates");
      const day1 = days1.get(date);
      const day2 = days2.get(d2);
      if (!(day1 instanceof Map) || !(day2 instanceof Map)) continue;
      if (day1.get("status") !== "available" || day2.get("status") !== "available") continue;
      const leg2Day = days2.get(date);
      if (!(leg2Day instanceof Map)) throw keyError(date);
      found.push([flightOnDay(f1, day1, date), flightOnDay(f2, leg2Day, d2)]);
    }
  }
  return pyDumps(found);
};
