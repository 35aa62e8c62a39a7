import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { listenLoopback } from "./loopback-server.ts";

/**
 * A fake travel remote over a real loopback socket, for the saga tests (issue 4; the source design's
 * trip: book a hotel, book a flight, e-mail the itinerary, undo what happened when the trip is off).
 *
 * Endpoints (mutating ones read the body as JSON; keyed ones honour `Idempotency-Key` like Stripe and
 * the IETF draft: replay the key's answer, 409 while its first request is in flight, 422 for a key
 * reused with another body):
 * - `POST /hotel/bookings` (keyed) → `{ booking_ref, hotel_id, guest_ref, check_in, nights, status: "confirmed" }`
 * - `POST /hotel/cancellations` (keyed) `{ booking_ref }` → the booking's status becomes `cancelled`
 * - `POST /flight/bookings` (keyed) → `{ booking_ref, flight_no, passenger_ref, status: "confirmed" }`,
 *   or 422 "no seats" while `flightNoSeats` is true
 * - `POST /flight/cancellations` (keyed) `{ booking_ref }`
 * - `POST /mail/send` (NO key support; lookup by the body's `clientRef`) → `{ message_id, to, kind, ... }`
 * - `POST /payments/refunds` (keyed) → `{ refund_id, order_id, amount, ... }`
 * - `GET /<path>?clientRef=<key>` on each of them: the key probe (a list; by `Idempotency-Key`, or the
 *   mail's `clientRef` field).
 *
 * Faults are queued per endpoint and consumed in order, like `startFakeRemote`'s.
 */
export const TRIP_ENDPOINTS = [
  "hotelBookings",
  "hotelCancellations",
  "flightBookings",
  "flightCancellations",
  "mail",
  "refunds",
] as const;
/** One of {@link TRIP_ENDPOINTS}. */
export type TripEndpoint = (typeof TRIP_ENDPOINTS)[number];

/** The path of each endpoint's POST. */
export const PATHS: Record<TripEndpoint, string> = {
  hotelBookings: "/hotel/bookings",
  hotelCancellations: "/hotel/cancellations",
  flightBookings: "/flight/bookings",
  flightCancellations: "/flight/cancellations",
  mail: "/mail/send",
  refunds: "/payments/refunds",
};
/** The path each endpoint's key probe reads (the mail service lists its messages elsewhere). */
export const PROBE_PATHS: Record<TripEndpoint, string> = { ...PATHS, mail: "/mail/messages" };

/** What the service does with one POST on an endpoint. */
export interface TripFault {
  /** Perform the effect (before answering). @default true */
  commit?: boolean;
  /** Wait this long (ms) before committing. @default 0 */
  commitDelayMs?: number;
  /**
   * `respond` (201 with the effect), `hang` (never answer; the client times out), `reset` (destroy the
   * socket before any response byte), or an HTTP status. @default "respond"
   */
  answer?: "respond" | "hang" | "reset" | number;
  /** Delay before answering, ms. @default 0 */
  respondDelayMs?: number;
}

/** One committed effect of an endpoint. */
export interface TripEffect {
  /** The `Idempotency-Key` (or the mail's `clientRef`) it was made with, or null. */
  clientRef: string | null;
  /** Epoch ms it was committed. */
  atEpochMs: number;
  /** The record as the service answers and probes see it. */
  view: Record<string, unknown>;
}

/** Per-endpoint counters. */
export type TripCounters = Record<TripEndpoint, number>;

/** A running fake travel service. */
export interface TripServices {
  /** Base URL, e.g. `http://127.0.0.1:40123`. */
  readonly url: string;
  /** Committed effects per endpoint (bookings, cancellations, mails, refunds), in order. */
  readonly effects: Record<TripEndpoint, TripEffect[]>;
  /** Mutating requests that reached each endpoint (read completely). */
  readonly posts: TripCounters;
  /** Probe requests served per endpoint. */
  readonly probes: TripCounters;
  /** While true for an endpoint, its probes answer HTTP 503. */
  readonly probesFail: Record<TripEndpoint, boolean>;
  /** While true, `POST /flight/bookings` answers 422 "no seats" and books nothing. */
  flightNoSeats: boolean;
  /** Hotel bookings by `booking_ref` (their `status` turns `cancelled`). */
  readonly hotelBookings: Map<string, Record<string, unknown>>;
  /** Flight bookings by `booking_ref`. */
  readonly flightBookings: Map<string, Record<string, unknown>>;
  /** How many cancellations the service performed for a hotel booking. */
  hotelCancellationsOf(bookingRef: string): number;
  /** How many cancellations the service performed for a flight booking. */
  flightCancellationsOf(bookingRef: string): number;
  /** Queues faults for the next POSTs on `endpoint`. */
  fault(endpoint: TripEndpoint, ...faults: TripFault[]): void;
  /** Stops the server and destroys open sockets. */
  close(): Promise<void>;
}

interface KeyEntry {
  body: string;
  inFlight: boolean;
  response?: { status: number; body: unknown };
}

const counters = (): TripCounters => Object.fromEntries(TRIP_ENDPOINTS.map((e) => [e, 0])) as unknown as TripCounters;

/** Starts the fake travel service on 127.0.0.1 with a random port. */
export async function startTripServices(options: { port?: number } = {}): Promise<TripServices> {
  const queues = Object.fromEntries(TRIP_ENDPOINTS.map((e) => [e, [] as TripFault[]])) as Record<
    TripEndpoint,
    TripFault[]
  >;
  const keys = Object.fromEntries(TRIP_ENDPOINTS.map((e) => [e, new Map<string, KeyEntry>()])) as Record<
    TripEndpoint,
    Map<string, KeyEntry>
  >;
  const hotelCancellations = new Map<string, number>();
  const flightCancellations = new Map<string, number>();
  let seq = 0;

  const state: Omit<TripServices, "url" | "close"> = {
    effects: Object.fromEntries(TRIP_ENDPOINTS.map((e) => [e, []])) as unknown as Record<TripEndpoint, TripEffect[]>,
    posts: counters(),
    probes: counters(),
    probesFail: Object.fromEntries(TRIP_ENDPOINTS.map((e) => [e, false])) as unknown as Record<TripEndpoint, boolean>,
    flightNoSeats: false,
    hotelBookings: new Map(),
    flightBookings: new Map(),
    hotelCancellationsOf: (ref) => hotelCancellations.get(ref) ?? 0,
    flightCancellationsOf: (ref) => flightCancellations.get(ref) ?? 0,
    fault: (endpoint, ...faults) => queues[endpoint].push(...faults),
  };

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  };

  /** Performs the endpoint's effect; an error answer (4xx) when the request is refused before work. */
  const perform = (
    endpoint: TripEndpoint,
    body: Record<string, unknown>,
  ): { view: Record<string, unknown> } | { status: number; error: string } => {
    const n = ++seq;
    switch (endpoint) {
      case "hotelBookings": {
        const view = {
          booking_ref: `HB-${n}`,
          hotel_id: body.hotel_id,
          guest_ref: body.guest_ref,
          check_in: body.check_in,
          nights: body.nights,
          status: "confirmed",
        };
        state.hotelBookings.set(view.booking_ref, view);
        return { view };
      }
      case "flightBookings": {
        if (state.flightNoSeats) return { status: 422, error: "no seats" };
        const view = {
          booking_ref: `FB-${n}`,
          flight_no: body.flight_no,
          passenger_ref: body.passenger_ref,
          status: "confirmed",
        };
        state.flightBookings.set(view.booking_ref, view);
        return { view };
      }
      case "hotelCancellations":
      case "flightCancellations": {
        const hotel = endpoint === "hotelCancellations";
        const bookings = hotel ? state.hotelBookings : state.flightBookings;
        const ref = String(body.booking_ref ?? "");
        const booking = bookings.get(ref);
        if (!booking) return { status: 404, error: `no booking ${ref}` };
        booking.status = "cancelled";
        const counts = hotel ? hotelCancellations : flightCancellations;
        counts.set(ref, (counts.get(ref) ?? 0) + 1);
        return { view: { cancellation_id: `${hotel ? "HC" : "FC"}-${n}`, booking_ref: ref, status: "cancelled" } };
      }
      case "mail":
        return { view: { message_id: `M-${n}`, ...body, status: "sent" } };
      case "refunds":
        return { view: { refund_id: `RF-${n}`, ...body, status: "succeeded" } };
    }
  };

  const handlePost = async (endpoint: TripEndpoint, req: IncomingMessage, res: ServerResponse, raw: string) => {
    state.posts[endpoint]++;
    const honours = endpoint !== "mail";
    const key = honours ? ((req.headers["idempotency-key"] as string | undefined) ?? null) : null;
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw || "{}");
    } catch {
      return send(res, 400, { error: "body must be JSON" });
    }
    const table = keys[endpoint];
    if (key) {
      const prior = table.get(key);
      if (prior) {
        if (prior.body !== raw) return send(res, 422, { error: "idempotency key reused with a different request" });
        if (prior.inFlight) return send(res, 409, { error: "a request with this idempotency key is in progress" });
        if (prior.response) return send(res, prior.response.status, prior.response.body);
      }
      table.set(key, { body: raw, inFlight: true });
    }
    const entry = key ? table.get(key) : undefined;
    const fault = queues[endpoint].shift() ?? {};
    if (fault.commitDelayMs) await sleep(fault.commitDelayMs);
    let outcome: { status: number; body: unknown } | null = null;
    let refusal: { status: number; body: unknown } | null = null;
    if (fault.commit ?? true) {
      const done = perform(endpoint, body);
      if ("view" in done) {
        const clientRef = key ?? (typeof body.clientRef === "string" ? body.clientRef : null);
        state.effects[endpoint].push({ clientRef, atEpochMs: Date.now(), view: done.view });
        outcome = { status: 201, body: done.view };
      } else {
        refusal = { status: done.status, body: { error: done.error } };
      }
    }
    // What a repeat with the same key gets: the effect's answer; after a refusal or no effect, a
    // fresh try (a refusal is not remembered, as Stripe does not save a result for refused work).
    const settle = () => {
      if (!entry || !key) return;
      entry.inFlight = false;
      if (outcome) entry.response = outcome;
      else table.delete(key);
    };
    if (fault.respondDelayMs) await sleep(fault.respondDelayMs);
    const answer = fault.answer ?? "respond";
    if (answer === "hang") {
      req.socket.once("close", settle);
      return;
    }
    settle();
    if (answer === "reset") {
      req.socket.resetAndDestroy();
      return;
    }
    if (typeof answer === "number") return send(res, answer, { error: `injected ${answer}` });
    if (refusal) return send(res, refusal.status, refusal.body);
    if (!outcome) return send(res, 500, { error: "no effect" });
    return send(res, outcome.status, outcome.body);
  };

  const handleGet = (endpoint: TripEndpoint, url: URL, res: ServerResponse) => {
    state.probes[endpoint]++;
    if (state.probesFail[endpoint]) return send(res, 503, { error: "probe unavailable" });
    const ref = url.searchParams.get("clientRef");
    // The current state of each effect (a cancelled booking shows `cancelled`).
    const current = (e: TripEffect) => {
      const ref = e.view.booking_ref;
      if (endpoint === "hotelBookings" && typeof ref === "string") return state.hotelBookings.get(ref) ?? e.view;
      if (endpoint === "flightBookings" && typeof ref === "string") return state.flightBookings.get(ref) ?? e.view;
      return e.view;
    };
    return send(res, 200, state.effects[endpoint].filter((e) => ref !== null && e.clientRef === ref).map(current));
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      if (req.method === "POST") {
        const endpoint = TRIP_ENDPOINTS.find((e) => PATHS[e] === url.pathname);
        if (endpoint) return void handlePost(endpoint, req, res, Buffer.concat(chunks).toString("utf8"));
      } else if (req.method === "GET") {
        const endpoint = TRIP_ENDPOINTS.find((e) => PROBE_PATHS[e] === url.pathname);
        if (endpoint) return handleGet(endpoint, url, res);
      }
      send(res, 404, { error: "not found" });
    });
  });
  const { url, close } = await listenLoopback(server, options.port ?? 0);
  return Object.assign(state, { url, close }) as TripServices;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
