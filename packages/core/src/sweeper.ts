import { Deadline } from "./deadline.ts";
import type { Envelope } from "./envelope.ts";
import type { Executor } from "./executor-api.ts";
import type { IntentStore } from "./intent-store.ts";
import type { StepReport } from "./saga.ts";

/** Options of {@link sweepStale}. */
export interface SweepOptions {
  /** The intent log (the executor's, normally). */
  store: IntentStore;
  /** The executor whose catalog knows the records' tools. */
  executor: Executor;
  /** Most records taken in one pass. @default 50 */
  limit?: number;
  /** Budget for reconciling one record (probes, a resend), ms; also the lease the sweeper holds on it. @default 30000 */
  budgetMs?: number;
  /** Records reconciled at once (their probes are spaced, so they mostly wait). @default 8 */
  concurrency?: number;
  /** Called with the number of records taken, as soon as they are taken (before any is reconciled). */
  onClaimed?: (taken: number) => void;
}

/** What one sweep pass did. */
export interface SweepReport {
  /** Records taken (PENDING past their deadline, UNKNOWN due for another try). */
  taken: number;
  /** Envelope per key after reconciliation. */
  results: { key: string; envelope?: Envelope; error?: string }[];
  /**
   * Keys of taken records left alone: their turn came with less than half of the pass's lease left
   * (slow probes ahead of them). They are due again when the lease passes, for a pass of their own.
   */
  left: string[];
  /**
   * Effects of aborted runs this pass undid (rule 13): they settled after the abort, and the process
   * that settled them did not undo them (it died first, or its undo failed). Absent when none.
   */
  undone?: StepReport[];
}

/**
 * One sweeper pass (source design: "Orphaned PENDING records… Run a sweeper that reconciles any
 * PENDING record older than its deadline"). Takes due records with `claimStale` (several sweepers
 * never take the same record), marks PENDING ones UNKNOWN, and reconciles each. Age alone never
 * settles a record (field case T30): without evidence it stays UNKNOWN, and after the executor's
 * `maxReconcileSweeps` passes it goes to the human queue. Then it undoes the effects of aborted runs
 * that settled and were never undone (`Executor.undoAbortedSteps`, rule 13).
 * Errors of one record are reported, not thrown, so one bad record cannot stop the pass.
 *
 * The whole pass holds one lease (`budgetMs` from the claim): each record is reconciled within what
 * is left of it, and a record whose turn comes with less than half of it left is not started
 * (`left`), so that no other pass — another replica's, another lane's — takes it while it is being
 * reconciled, and no record is judged on a budget too short to probe.
 */
export async function sweepStale(options: SweepOptions): Promise<SweepReport> {
  const limit = options.limit ?? 50;
  const budgetMs = options.budgetMs ?? 30_000;
  if (!Number.isInteger(limit) || limit < 1) throw new TypeError("sweepStale: limit must be an integer ≥ 1");
  if (!(budgetMs >= 3000)) throw new TypeError("sweepStale: budgetMs must be at least 3000 ms");
  const clock = options.executor.clock;
  // Staleness and the sweeper's lease are judged by the store's clock, never this replica's (rule 9).
  // The lease runs from `now` in the store's clock; measured here from before that read (monotonic, so
  // a skewed or stepped replica clock cannot stretch it).
  const leaseStart = performance.now();
  const now = options.store.clockEpochMs ? await options.store.clockEpochMs() : clock.nowEpochMs();
  const taken = await options.store.claimStale({ nowEpochMs: now, limit, leaseUntilEpochMs: now + budgetMs });
  options.onClaimed?.(taken.length);
  const concurrency = options.concurrency ?? 8;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new TypeError("sweepStale: concurrency must be an integer ≥ 1");
  const results: SweepReport["results"] = [];
  const left: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < taken.length) {
      const record = taken[next++]!;
      const remainingMs = budgetMs - (performance.now() - leaseStart);
      if (remainingMs < budgetMs / 2) {
        left.push(record.key);
        continue;
      }
      try {
        // The leased row as claimStale returned it: no second read (a stale copy fails its compare-and-set).
        const envelope = await options.executor.reconcileKey(
          record.key,
          Deadline.after(remainingMs, clock),
          "sweeper",
          record,
        );
        results.push({ key: record.key, envelope });
      } catch (error) {
        results.push({ key: record.key, error: error instanceof Error ? error.message : String(error) });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, taken.length) }, worker));
  let undone: StepReport[] = [];
  try {
    undone = await options.executor.undoAbortedSteps({ limit });
  } catch (error) {
    results.push({
      key: "",
      error: `undo of aborted runs' effects: ${error instanceof Error ? error.message : String(error)}`,
    });
  }
  return { taken: taken.length, results, left, ...(undone.length ? { undone } : {}) };
}

/**
 * The next pass's `limit` after `report` (records per pass, between `concurrency` and `max`): a pass
 * that had to leave records (slow probes: their turn came past half its lease) took more than it
 * could reconcile — those wait for the lease to pass — so the next one takes what this one
 * reconciled; passes that finish double it back up to `max`.
 */
export function nextSweepLimit(limit: number, report: SweepReport, max: number, concurrency: number): number {
  if (report.left.length > 0) return Math.min(max, Math.max(concurrency, report.results.length));
  return Math.min(max, Math.max(limit * 2, concurrency));
}
