/**
 * Attack on issue 21 §1 × rule 13 on real PostgreSQL: a booking is in flight when its run is aborted
 * (an operator, say); the hotel answers 201, and the outcome write meets a stalled database. The call
 * answers by its deadline minus the reserve from what it has (answer-by.ts): the SUCCEEDED "proof in
 * hand". On time, the same answer would say "its run was aborted … the executor is reversing it. Do
 * not continue the run or redo this step" (`abortedRunEnvelope`); the late one says "The effect
 * happened exactly once. … tell the user it is done", while the executor cancels it once the database
 * is back.
 *
 * OPEN DEFECT (the run's next step is refused RUN_ABORTED_BEFORE_SEND, and the reversal does happen,
 * but the user may be told "booked"): `it.fails` documents it; remove `.fails` once a late SUCCEEDED
 * of an aborted run says so.
 * The effect invariants (one booking, one cancellation, SUCCEEDED told only with the booking made)
 * hold: the first test checks them.
 */
import { createExecutor, Deadline } from "@tristate/core";
import { startTripServices, tripTools } from "@tristate/testing";
import { startTcpProxy } from "@tristate/testing/tcp-proxy";
import { afterEach, describe, expect, it } from "vitest";
import { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { createTestDatabase } from "../../src/test-database.ts";
import { Cleanup } from "./helpers.ts";

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const HOTEL = { hotel_id: "H-1", guest_ref: "G-1", check_in: "2026-07-01", nights: 2 };

/** A booking in flight when its run is aborted; its outcome write then meets a stalled database. */
async function lateSuccessAfterAbort() {
  const db = cleanup.add(await createTestDatabase(), (d) => d.drop());
  const proxy = cleanup.add(await startTcpProxy({ targetPort: Number(new URL(db.url).port || 5432) }), (p) =>
    p.close(),
  );
  const viaProxy = new URL(db.url);
  viaProxy.port = String(proxy.port);
  const store = cleanup.add(new PrismaIntentStore({ databaseUrl: viaProxy.toString() }), (s) => s.close());
  const services = cleanup.add(await startTripServices(), (s) => s.close());
  const ex = createExecutor({ store, tools: tripTools(services), probe: { spacingMs: 0, timeoutMs: 500 } });
  const warm = { runId: "run-warm", stepId: "w", tool: "book_hotel", args: { ...HOTEL, guest_ref: "W" } };
  await ex.call({ ...warm, deadline: Deadline.after(5000) });

  services.fault("hotelBookings", { respondDelayMs: 600 });
  const before = services.posts.hotelBookings;
  const input = { runId: "run-1", stepId: "hotel", tool: "book_hotel", args: HOTEL };
  const booking = ex.call({ ...input, deadline: Deadline.after(5000) });
  while (services.posts.hotelBookings === before) await sleep(10);
  const by = { actorKeyId: "op", actorName: "ana", via: "operator", reason: "customer cancelled" } as const;
  const report = await ex.abortRun("run-1", Deadline.after(10_000), by);
  expect(report.steps[0]).toMatchObject({ outcome: "in_flight" });
  proxy.stall(); // the hotel answers 201 in a moment; its outcome write meets a stalled database
  const envelope = await booking;
  proxy.resume();
  await ex.undosDone();
  const ref = String((envelope.result as { booking_ref?: string } | undefined)?.booking_ref ?? "");
  console.log("late answer:", envelope.status, "—", envelope.message);
  return {
    envelope,
    bookings: services.effects.hotelBookings.length - 1,
    cancellations: services.hotelCancellationsOf(ref),
  };
}

describe("attack 21: a late SUCCEEDED of a step whose run was aborted while it was in flight", () => {
  it("one booking, cancelled once; SUCCEEDED only with the booking made", async () => {
    const { envelope, bookings, cancellations } = await lateSuccessAfterAbort();
    expect(bookings).toBe(1);
    expect(cancellations, "the aborted run's booking is cancelled once").toBe(1);
    expect(envelope.status).toBe("SUCCEEDED");
  }, 30_000);

  it.fails("the late answer tells the agent the run was aborted and the booking is being reversed", async () => {
    const { envelope } = await lateSuccessAfterAbort();
    expect(envelope.message).toMatch(/aborted/);
  }, 30_000);
});
