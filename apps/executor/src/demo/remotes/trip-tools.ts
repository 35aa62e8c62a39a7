/**
 * The tools of the fake travel remote (`startTripServices` in `trip-services.ts`): hotel and flight bookings and their
 * cancellations, the itinerary e-mail, a refund — each declared with `defineTool` as a user would,
 * with key probes and compensations, for the saga tests and the demo.
 */
import { type AnyTool, callHttp, canon, defineTool, type ProbeContext, type ToolSpec } from "@tristate/core";
import { z } from "zod";
import { PATHS, PROBE_PATHS, type TripEndpoint, type TripServices } from "./trip-services.ts";

export const hotelBookingArgs = z.object({
  hotel_id: z.string().min(1),
  guest_ref: z.string().min(1),
  check_in: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  nights: z.number().int().positive(),
});
export const flightBookingArgs = z.object({
  flight_no: z.string().min(1),
  passenger_ref: z.string().min(1),
});
export const cancellationArgs = z.object({ booking_ref: z.string().min(1) });
export const itineraryArgs = z.object({
  to: z.string().email(),
  trip_ref: z.string().min(1),
  text: z.string().optional(),
});
export const tripRefundArgs = z.object({
  order_id: z.string().min(1),
  amount: z.union([z.number(), z.string()]),
  currency: z.string().length(3).optional(),
});

/** The tools {@link tripTools} makes. */
export type TripToolName =
  | "book_hotel"
  | "cancel_hotel"
  | "book_flight"
  | "cancel_flight"
  | "send_itinerary"
  | "send_correction"
  | "issue_refund";

/**
 * Replacements per tool, merged over the defaults (e.g. `{ book_hotel: { kind: "unsafe", probe: undefined } }`).
 * `send_itinerary.corrective: undefined` removes its corrective action.
 */
// biome-ignore lint/suspicious/noExplicitAny: overrides of tools with different argument types
export type TripToolOverrides = Partial<Record<TripToolName, Partial<ToolSpec<any, any>>>>;

/** Default per-call timeout of the trip tools, ms. */
export const TRIP_TOOL_TIMEOUT_MS = 800;

type Remote = Pick<TripServices, "url">;

/** A key probe: `GET <path>?clientRef=<key>` → the first match or null. */
function keyProbe(services: Remote, endpoint: TripEndpoint) {
  return async (_args: unknown, ctx: ProbeContext): Promise<unknown> => {
    const res = await callHttp(ctx, {
      method: "GET",
      url: `${services.url}${PROBE_PATHS[endpoint]}?clientRef=${encodeURIComponent(ctx.clientRef)}`,
    });
    return (res.body as unknown[])[0] ?? null;
  };
}

function post(services: Remote, endpoint: TripEndpoint) {
  return async (args: unknown, ctx: Parameters<AnyTool["invoke"]>[1]): Promise<unknown> =>
    (await callHttp(ctx, { method: "POST", url: `${services.url}${PATHS[endpoint]}`, body: args })).body;
}

/**
 * The trip's tools against {@link TripServices} (only `url` is read, so a child process can pass
 * `{ url }`): `book_hotel` (compensation `cancel_hotel`), `cancel_hotel`, `book_flight`
 * (compensation `cancel_flight`), `cancel_flight`, `send_itinerary` (unsafe, irreversible, corrective
 * `send_correction`), `send_correction`, and `issue_refund` with a confirmation policy above 100.00.
 * Every tool has a key probe.
 */
export function tripTools(services: Remote, overrides: TripToolOverrides = {}): AnyTool[] {
  const make = <A, R>(spec: ToolSpec<A, R> & { name: TripToolName }): AnyTool =>
    defineTool<A, R>({ ...spec, ...(overrides[spec.name] ?? {}) } as ToolSpec<A, R>);
  return [
    make({
      name: "book_hotel",
      kind: "idempotent_by_key",
      args: hotelBookingArgs,
      identity: { hotel_id: canon.upper, guest_ref: canon.upper, check_in: canon.trim },
      timeoutMs: TRIP_TOOL_TIMEOUT_MS,
      describe: (a: z.infer<typeof hotelBookingArgs>) =>
        `hotel booking at ${a.hotel_id} for ${a.guest_ref} from ${a.check_in} (${a.nights} nights)`,
      invoke: post(services, "hotelBookings"),
      probe: keyProbe(services, "hotelBookings"),
      compensation: {
        tool: "cancel_hotel",
        args: (_a: unknown, result: { booking_ref?: unknown } | undefined) => ({ booking_ref: result?.booking_ref }),
      },
    }),
    make({
      name: "cancel_hotel",
      kind: "idempotent_by_key",
      args: cancellationArgs,
      identity: { booking_ref: canon.upper },
      timeoutMs: TRIP_TOOL_TIMEOUT_MS,
      describe: (a: z.infer<typeof cancellationArgs>) => `cancellation of hotel booking ${a.booking_ref}`,
      invoke: post(services, "hotelCancellations"),
      probe: keyProbe(services, "hotelCancellations"),
    }),
    make({
      name: "book_flight",
      kind: "idempotent_by_key",
      args: flightBookingArgs,
      identity: { flight_no: canon.upper, passenger_ref: canon.upper },
      timeoutMs: TRIP_TOOL_TIMEOUT_MS,
      describe: (a: z.infer<typeof flightBookingArgs>) => `flight booking ${a.flight_no} for ${a.passenger_ref}`,
      invoke: post(services, "flightBookings"),
      probe: keyProbe(services, "flightBookings"),
      compensation: {
        tool: "cancel_flight",
        args: (_a: unknown, result: { booking_ref?: unknown } | undefined) => ({ booking_ref: result?.booking_ref }),
      },
    }),
    make({
      name: "cancel_flight",
      kind: "idempotent_by_key",
      args: cancellationArgs,
      identity: { booking_ref: canon.upper },
      timeoutMs: TRIP_TOOL_TIMEOUT_MS,
      describe: (a: z.infer<typeof cancellationArgs>) => `cancellation of flight booking ${a.booking_ref}`,
      invoke: post(services, "flightCancellations"),
      probe: keyProbe(services, "flightCancellations"),
    }),
    make({
      name: "send_itinerary",
      kind: "unsafe",
      irreversible: true,
      args: itineraryArgs,
      identity: { to: canon.lower, trip_ref: canon.upper },
      timeoutMs: TRIP_TOOL_TIMEOUT_MS,
      describe: (a: z.infer<typeof itineraryArgs>) => `itinerary e-mail for trip ${a.trip_ref} to ${a.to}`,
      // The mail service has no key support: the key travels as the message's client reference.
      invoke: (args: z.infer<typeof itineraryArgs>, ctx: Parameters<AnyTool["invoke"]>[1]) =>
        post(services, "mail")({ ...args, kind: "itinerary", clientRef: ctx.idempotencyKey }, ctx),
      probe: keyProbe(services, "mail"),
      corrective: {
        tool: "send_correction",
        args: (a: z.infer<typeof itineraryArgs>) => ({ to: a.to, trip_ref: a.trip_ref }),
      },
    }),
    make({
      name: "send_correction",
      kind: "unsafe",
      args: itineraryArgs,
      identity: { to: canon.lower, trip_ref: canon.upper },
      timeoutMs: TRIP_TOOL_TIMEOUT_MS,
      describe: (a: z.infer<typeof itineraryArgs>) => `correction e-mail for trip ${a.trip_ref} to ${a.to}`,
      invoke: (args: z.infer<typeof itineraryArgs>, ctx: Parameters<AnyTool["invoke"]>[1]) =>
        post(services, "mail")(
          { ...args, kind: "correction", text: args.text ?? "This trip was cancelled.", clientRef: ctx.idempotencyKey },
          ctx,
        ),
      probe: keyProbe(services, "mail"),
    }),
    make({
      name: "issue_refund",
      kind: "idempotent_by_key",
      args: tripRefundArgs,
      identity: { order_id: canon.upper, amount: canon.decimal(2) },
      timeoutMs: TRIP_TOOL_TIMEOUT_MS,
      describe: (a: z.infer<typeof tripRefundArgs>) =>
        `refund of ${canon.decimal(2)(a.amount, "amount")} ${a.currency ?? "EUR"} on order ${a.order_id.toUpperCase()}`,
      invoke: post(services, "refunds"),
      probe: keyProbe(services, "refunds"),
      confirmation: (a: z.infer<typeof tripRefundArgs>) =>
        Number(a.amount) > 100 ? "refunds over 100.00 need confirmation" : false,
    }),
  ];
}
