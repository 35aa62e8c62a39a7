/**
 * Attack on issue 20 (rule 13 × rule 15): an abort must reach every step of the run wherever its record
 * is. A run's booking settled and was moved to `intent_records_archive` by the archiver (`archiveIntents`),
 * then the run is aborted (an agent's or an operator's abort, days later): the booking at the remote must be
 * cancelled once, or the report must say a person has to decide. Effects counted at the fake trip services.
 */
import { randomUUID } from "node:crypto";
import { createExecutor, Deadline, type Executor, type RunAbortInput, sweepStale } from "@tristate/core";
import { startTripServices, type TripServices, tripTools } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createPrismaIntentStore, createTestDatabase, type TestDatabase } from "../../src/index.ts";
import type { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { archiveIntents } from "../../src/queries/index.ts";
import { Cleanup } from "./helpers.ts";

const HOTEL = { hotel_id: "H-LIS-7", guest_ref: "G-42", check_in: "2026-07-01", nights: 3 };
const AGENT: RunAbortInput = {
  actorKeyId: "key-agent",
  actorName: "trip-agent",
  via: "agent",
  reason: "user cancelled",
};
const turn = () => Deadline.after(8_000);

describe("attack 20: abort of a run whose settled step was archived", () => {
  const cleanup = new Cleanup();
  let db: TestDatabase;
  let services: TripServices;
  let store: PrismaIntentStore;
  let ex: Executor;
  let runId: string;

  beforeEach(async () => {
    db = cleanup.add(await createTestDatabase(), (d) => d.drop());
    services = cleanup.add(await startTripServices(), (s) => s.close());
    store = cleanup.add(createPrismaIntentStore({ databaseUrl: db.url, poolSize: 4 }), (s) => s.close());
    ex = createExecutor({
      store,
      tools: tripTools(services),
      probe: { spacingMs: 50, timeoutMs: 500, attempts: 2 },
      reserveMs: 200,
      minCallBudgetMs: 200,
    });
    runId = `run-${randomUUID().slice(0, 8)}`;
  });
  afterEach(() => cleanup.run());

  // Was a bug (issue 20 §1 × §3): abortRun read only the live table. It now moves the run's archived
  // records back first (IntentStore.restoreArchivedRun), so they are seen and undone.
  it("the archived booking is cancelled once (or a person is asked), never reported complete with the booking standing", async () => {
    const booked = await ex.call({ runId, stepId: "hotel", tool: "book_hotel", args: HOTEL, deadline: turn() });
    expect(booked.status).toBe("SUCCEEDED");
    expect((await archiveIntents(store.prisma, { olderThanEpochMs: Date.now() + 3_600_000 })).moved).toBe(1);

    const report = await ex.abortRun(runId, turn(), AGENT);
    await ex.undosDone();
    await sweepStale({ store, executor: ex }); // the sweeper's undoAbortedSteps pass does not see it either
    // What the remote holds: one booking. It must be cancelled, or the report must not say complete.
    expect(services.effects.hotelBookings).toHaveLength(1);
    const cancelled = services.posts.hotelCancellations;
    const askedAPerson = report.needsHuman > 0 || report.complete === false;
    expect(cancelled === 1 || askedAPerson, JSON.stringify({ report, cancelled })).toBe(true);
  });
});
