/**
 * Attack on issue 20 §1 (rule 13): a step in flight when its run is aborted gets an ambiguous answer
 * (503, nothing committed at the remote), so it settles UNKNOWN — not SUCCEEDED, so no undo starts and,
 * unlike an UNKNOWN seen at abort time, nobody queues it for a person. Reconciliation then finds it absent
 * and resends it: the effect is created at the remote AFTER the run was aborted. For an irreversible tool
 * that is an effect nobody can undo. Effects counted at the fake trip services.
 */
import { randomUUID } from "node:crypto";
import { createExecutor, Deadline, type RunAbortInput, sweepStale } from "@tristate/core";
import { startTripServices, type TripServices, tripTools } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createPrismaIntentStore, createTestDatabase, type TestDatabase } from "../../src/index.ts";
import type { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { Cleanup } from "./helpers.ts";

const HOTEL = { hotel_id: "H-LIS-7", guest_ref: "G-42", check_in: "2026-07-01", nights: 3 };
const AGENT: RunAbortInput = {
  actorKeyId: "key-agent",
  actorName: "trip-agent",
  via: "agent",
  reason: "user cancelled",
};
const turn = () => Deadline.after(8_000);
const IRREVERSIBLE = { book_hotel: { irreversible: true, compensation: undefined, corrective: undefined } } as never;

describe("attack 20: an in-flight step of an aborted run that settles UNKNOWN is resent after the abort", () => {
  const cleanup = new Cleanup();
  let db: TestDatabase;
  let services: TripServices;
  let store: PrismaIntentStore;
  let runId: string;

  beforeEach(async () => {
    db = cleanup.add(await createTestDatabase(), (d) => d.drop());
    services = cleanup.add(await startTripServices(), (s) => s.close());
    store = cleanup.add(createPrismaIntentStore({ databaseUrl: db.url, poolSize: 4 }), (s) => s.close());
    runId = `run-${randomUUID().slice(0, 8)}`;
  });
  afterEach(() => cleanup.run());

  // Observed: the first call itself (its in-turn reconciliation after the 503: probe absent → resend
  // same key) books the irreversible hotel after the abort; the agent is told SUCCEEDED.
  // Was a bug (rule 13): reconciliation resent an aborted run's UNKNOWN step after "absent". Fixed in
  // core/src/reconcile.ts's resend: a resend of an aborted run's step goes to a person (RUN_ABORTED).
  it("after the abort, nothing more is sent: the UNKNOWN step waits for a person", async () => {
    const ex = createExecutor({
      store,
      tools: tripTools(services, IRREVERSIBLE),
      probe: { spacingMs: 50, timeoutMs: 500, attempts: 2 },
      reserveMs: 200,
      minCallBudgetMs: 200,
    });
    services.fault("hotelBookings", { commit: false, answer: 503, respondDelayMs: 1_000 });
    const call = ex.call({ runId, stepId: "hotel", tool: "book_hotel", args: HOTEL, deadline: turn() });
    // Abort while the booking is on the wire.
    for (let i = 0; i < 100 && services.posts.hotelBookings === 0; i++) await new Promise((r) => setTimeout(r, 10));
    const report = await ex.abortRun(runId, turn(), AGENT);
    expect(report).toMatchObject({ inFlight: 1, complete: false });
    const postsAtAbort = services.posts.hotelBookings; // the one booking POST on the wire (it commits nothing)
    const envelope = await call;

    // The agent repeats the step (a repeat reconciles), and the sweeper passes.
    const repeat = await ex.call({ runId, stepId: "hotel", tool: "book_hotel", args: HOTEL, deadline: turn() });
    await sweepStale({ store, executor: ex, budgetMs: 5_000 });
    await ex.undosDone();
    const [record] = await store.listByRun(runId);
    expect({
      postsAfterAbort: services.posts.hotelBookings - postsAtAbort,
      bookingsAtRemote: services.effects.hotelBookings.length,
      first: envelope.status,
      repeat: repeat.status,
      needsHuman: record?.needsHuman,
    }).toEqual({
      postsAfterAbort: 0,
      bookingsAtRemote: 0,
      first: "UNKNOWN",
      repeat: "UNKNOWN",
      needsHuman: true,
    });
  });
});
