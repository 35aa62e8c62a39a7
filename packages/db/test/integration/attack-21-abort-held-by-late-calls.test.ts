/**
 * Attack on issue 21 §1 on real PostgreSQL: "one deadline per agent turn bounds everything" — an
 * abort of a run (`abortRun`, the agent's `runs.abort`) carries the turn's deadline too. Since
 * 726317a, `outcomesWritten` (which `abortRun`, `resolve`, `compensate` and `rerunProbes` await first)
 * also waits for every *late call* of the executor: work of calls already answered
 * `INTENT_LOG_TIMEOUT` that is still stuck on the database — in any run. One call of another run
 * whose claim is held up (here by an uncommitted conflicting row; in the field a stall, up to the pool's
 * 32 s `query_timeout`) holds the abort's answer with it, long past the abort's own deadline, though
 * the aborted run has nothing to do with it and the database answers the abort's own statements at once.
 *
 * What must hold: the abort answers by its deadline minus the reserve (its report, or an honest
 * "could not finish in time"), whatever another run's late work is waiting for. Fixed: `abortRun` and
 * `compensate` wait for that work no longer than their answer time (`untilAnswerTime`, answer-by.ts);
 * a step whose write has not landed reads as in flight, and rule 13 undoes it when it settles. (The
 * abort's own statements are still unbounded: apps/executor/test/attack-21-abort-deadline.test.ts.)
 */
import { createExecutor, DEFAULT_RESERVE_MS, Deadline } from "@tristate/core";
import { startTripServices, tripTools } from "@tristate/testing";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { createTestDatabase } from "../../src/test-database.ts";
import { Cleanup } from "./helpers.ts";

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** How late (ms) an answer may come after deadline minus reserve on a loaded machine. */
const ANSWER_TOLERANCE_MS = 250;
/** How long the other run's claim stays held (ms): far past every deadline of the test. */
const HELD_MS = 9000;
const hotel = (guest: string) => ({ hotel_id: "H-1", guest_ref: guest, check_in: "2026-07-01", nights: 2 });

describe("attack 21: an abort's answer is held by another run's late call", () => {
  it("abortRun answers by its deadline minus the reserve while another run's claim is stuck", async () => {
    const db = cleanup.add(await createTestDatabase(), (d) => d.drop());
    const store = cleanup.add(new PrismaIntentStore({ databaseUrl: db.url }), (s) => s.close());
    const services = cleanup.add(await startTripServices(), (s) => s.close());
    const ex = createExecutor({ store, tools: tripTools(services), probe: { spacingMs: 0, timeoutMs: 500 } });
    const warm = await ex.call({
      runId: "run-warm",
      stepId: "hotel",
      tool: "book_hotel",
      args: hotel("G-0"),
      deadline: Deadline.after(10_000),
    });
    expect(warm.status).toBe("SUCCEEDED");

    // Another session holds an uncommitted row under run-busy's (run, step, tool): its claim waits on it.
    const locker = cleanup.add(new pg.Client({ connectionString: db.url }), (c) => c.end());
    await locker.connect();
    await locker.query("BEGIN");
    await locker.query("CREATE TEMP TABLE held ON COMMIT DROP AS SELECT * FROM intent_records WHERE key = $1", [
      warm.idempotency_key,
    ]);
    await locker.query("UPDATE held SET key = 'held-key', run_id = 'run-busy', step_id = 'hotel'");
    await locker.query("INSERT INTO intent_records SELECT * FROM held");
    const release = setTimeout(() => void locker.query("ROLLBACK"), HELD_MS);
    cleanup.add(release, clearTimeout);

    const busy = await ex.call({
      runId: "run-busy",
      stepId: "hotel",
      tool: "book_hotel",
      args: hotel("G-1"),
      deadline: Deadline.after(3500),
    });
    expect(busy).toMatchObject({ status: "UNKNOWN", error: { code: "INTENT_LOG_TIMEOUT" } });

    // An unrelated run is aborted with a 4 s turn: its answer is due 2 s from now.
    const deadline = Deadline.after(4000);
    const report = await ex.abortRun("run-other", deadline, {
      actorKeyId: "",
      actorName: "agent",
      via: "agent",
      reason: "user cancelled",
    });
    const lateByMs = Date.now() - (deadline.epochMs - DEFAULT_RESERVE_MS);
    expect(report.runId).toBe("run-other");
    expect(lateByMs, "the abort answered this long after its deadline minus the reserve").toBeLessThanOrEqual(
      ANSWER_TOLERANCE_MS,
    );
    await ex.outcomesWritten();
  }, 30_000);
});
