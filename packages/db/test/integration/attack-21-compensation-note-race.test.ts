/**
 * Attack on issue 21 §1 × rule 13 (compensation-settled.ts, c914c56) on real PostgreSQL: an abort's
 * compensation answered late. The compensation's claim is held up past its answer time (the abort's
 * turn), so the call answers UNKNOWN `INTENT_LOG_TIMEOUT` and its own work goes on in the background;
 * the abort then notes that UNKNOWN on the original. Meanwhile the claim commits, the send is refused
 * (the deadline passed) and the compensation settles FAILED_NO_EFFECT. Its settle hook reads the
 * original — and when the abort's note has not landed yet, "a note not yet written is left to that
 * abort" — which then writes UNKNOWN, the status of its (late) envelope, and never looks again.
 *
 * The interleaving is one a stalled database produces by chance (each side is one round trip from the
 * other once forwarding resumes); here it is made deterministic with real locks: an uncommitted
 * conflicting insert holds the compensation's claim, and a `FOR UPDATE` on the original holds the
 * abort's note write until the compensation has settled.
 *
 * What must hold: an aborted run's confirmed effect is reversed, or a person is asked (rule 13, "no
 * silent gap") — never a note saying "being reconciled" on a compensation that nobody will reconcile.
 */
import { createExecutor, Deadline, type Executor } from "@tristate/core";
import { startTripServices, type TripServices, tripTools } from "@tristate/testing";
import fc from "fast-check";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { createTestDatabase, type TestDatabase } from "../../src/test-database.ts";
import { Cleanup } from "./helpers.ts";

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A direct session (not through the executor's pool) that holds locks for the test. */
async function session(url: string): Promise<pg.Client> {
  const client = cleanup.add(new pg.Client({ connectionString: url }), (c) => c.end());
  await client.connect();
  return client;
}

interface Stack {
  db: TestDatabase;
  store: PrismaIntentStore;
  services: TripServices;
  ex: Executor;
}

async function setUp(): Promise<Stack> {
  const db = cleanup.add(await createTestDatabase(), (d) => d.drop());
  const store = cleanup.add(new PrismaIntentStore({ databaseUrl: db.url }), (s) => s.close());
  const services = cleanup.add(await startTripServices(), (s) => s.close());
  const ex = createExecutor({ store, tools: tripTools(services), probe: { spacingMs: 0, timeoutMs: 500 } });
  return { db, store, services, ex };
}

/**
 * Books a hotel in `runId`, then aborts the run while its cancellation's claim (S1) and the booking's
 * row (S2) are held; the cancellation answers late (UNKNOWN). S1 and S2 are let go in `order`,
 * `gapMs` apart. Returns what stands once everything has landed (the sweeper's undo pass included).
 */
async function abortWithLateCancellation(s: Stack, runId: string, order: "claim_first" | "note_first", gapMs: number) {
  const booking = await s.ex.call({
    runId,
    stepId: "hotel",
    tool: "book_hotel",
    args: { hotel_id: "H-1", guest_ref: `G-${runId}`, check_in: "2026-07-01", nights: 2 },
    deadline: Deadline.after(10_000),
  });
  expect(booking.status).toBe("SUCCEEDED");
  const bookingRef = String((booking.result as { booking_ref: string }).booking_ref);
  const cancelStep = `compensate:${booking.idempotency_key}`;
  const cancelKey = s.ex.keyFor({ runId, stepId: cancelStep, tool: "cancel_hotel", args: { booking_ref: bookingRef } });

  // S1: an uncommitted row under the compensation's key — its claim (INSERT … ON CONFLICT) waits on it.
  const s1 = await session(s.db.url);
  await s1.query("BEGIN");
  await s1.query("CREATE TEMP TABLE held ON COMMIT DROP AS SELECT * FROM intent_records WHERE key = $1", [
    booking.idempotency_key,
  ]);
  await s1.query("UPDATE held SET key = $1, step_id = $2, tool = 'cancel_hotel'", [cancelKey, cancelStep]);
  await s1.query("INSERT INTO intent_records SELECT * FROM held");
  // S2: the original's row locked — the abort's note (a compare-and-set update of it) waits on it.
  const s2 = await session(s.db.url);
  await s2.query("BEGIN");
  await s2.query("SELECT 1 FROM intent_records WHERE key = $1 FOR UPDATE", [booking.idempotency_key]);

  // The abort's turn: 3.5 s, so the compensation answers by 1.5 s (reserve 2 s) — UNKNOWN, late.
  const abort = s.ex.abortRun(runId, Deadline.after(3500));
  await sleep(2200);
  // The claim commits when S1 goes (the send is then refused: past the deadline); the note lands when S2 goes.
  const [first, second] = order === "claim_first" ? [s1, s2] : [s2, s1];
  await first.query(first === s1 ? "ROLLBACK" : "COMMIT");
  if (order === "claim_first") await s.ex.outcomesWritten(); // the cancellation settled, its hook ran
  await sleep(gapMs);
  await second.query(second === s1 ? "ROLLBACK" : "COMMIT");
  const report = await abort;
  expect(report.steps[0]?.compensation).toMatchObject({ status: "UNKNOWN", error: { code: "INTENT_LOG_TIMEOUT" } });
  await s.ex.outcomesWritten();
  // Everything that would still act on it: the sweeper's undo pass, then whatever it started.
  await s.ex.undoAbortedSteps({ graceMs: 0 });
  await s.ex.undosDone();
  const original = await s.store.get(booking.idempotency_key);
  const cancel = await s.store.get(cancelKey);
  return { original, cancel, cancelKey, cancellations: s.services.hotelCancellationsOf(bookingRef) };
}

/** Reversed, or a person is asked; the note on the original never contradicts its compensation's record. */
function expectNoSilentGap(r: Awaited<ReturnType<typeof abortWithLateCancellation>>) {
  const reversed = r.cancellations === 1;
  const told = r.original?.needsHuman === true || r.cancel?.needsHuman === true;
  expect(
    { reversed, told, note: r.original?.compensation, cancel: r.cancel?.status },
    "the booking stands, nobody is asked, and the note still says its reversal is being reconciled",
  ).toSatisfy(() => reversed || told);
  expect(r.original?.compensation).toMatchObject({ key: r.cancelKey, status: r.cancel?.status });
  expect(r.cancellations).toBeLessThanOrEqual(1);
}

describe("attack 21: an abort's compensation answered late, settled before the abort's note landed", () => {
  it("the aborted booking is reversed or waits for a person — never left 'being reconciled' with nobody on it", async () => {
    const s = await setUp();
    expectNoSilentGap(await abortWithLateCancellation(s, "run-1", "claim_first", 0));
  }, 30_000);

  it("either order, any gap (fast-check): no silent gap", async () => {
    const s = await setUp();
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("claim_first" as const, "note_first" as const),
        fc.integer({ min: 0, max: 300 }),
        async (order, gapMs) => {
          expectNoSilentGap(await abortWithLateCancellation(s, `run-p${n++}`, order, gapMs));
        },
      ),
      { numRuns: 4, endOnFailure: true },
    );
  }, 60_000);
});
