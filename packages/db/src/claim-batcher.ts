import type { IntentRecord } from "@tristate/core";
import {
  type BatchedClaim,
  type ClaimBatchRow,
  claimBatchSql,
  claimedRecord,
  conflictsWithin,
} from "./claim-batch-sql.ts";
import { toIntentRecord } from "./intent-row.ts";
import type { Statement } from "./intent-sql.ts";

/** Runs one statement and returns its rows (the store's pool, named or not). */
export type RunStatement = <T>(statement: Statement) => Promise<T[]>;

/** Options of {@link ClaimBatcher}. */
export interface ClaimBatcherOptions {
  /** Most claims in one statement. @default 64 */
  maxBatch?: number;
  /** Batch statements in flight at once (each on its own pooled connection). @default 2 */
  maxInFlight?: number;
}

/** A batched claim's answer: inserted, or lost to `existing` (null: the winner is not visible yet, read it again). */
export type BatchClaimResult =
  | { claimed: true; record: IntentRecord }
  | { claimed: false; existing: IntentRecord | null };

interface Waiting {
  claim: BatchedClaim;
  resolve(result: BatchClaimResult): void;
  reject(error: unknown): void;
}

/**
 * Group commit of claims. A claim that arrives while fewer than `maxInFlight` batches are running
 * goes out at once (alone, when nothing else waits), so a sequential caller waits for nothing extra;
 * claims that arrive while the limit is reached queue and leave together in the next multi-row
 * statement: one round trip and one WAL flush (synchronous commit on) for all of them. The added wait
 * is therefore at most one batch's round trip, and only under concurrency, when it is shared.
 *
 * Per-claim semantics are the single claim's: each claim's promise settles only after the statement
 * that holds it has committed durably; claims that compete for one record (see
 * {@link conflictsWithin}) never share a batch (the later one waits for the next), so exactly one wins
 * and the others get the winner's record; a claim's events are written only when it inserted. When a
 * batch of several fails, each of its claims is retried alone, so one bad claim fails only itself.
 */
export class ClaimBatcher {
  readonly #run: RunStatement;
  readonly #maxBatch: number;
  readonly #maxInFlight: number;
  /** Batch statements sent and claims they held (claims / batches = the mean batch size). */
  readonly stats = { batches: 0, claims: 0 };
  #queue: Waiting[] = [];
  #inFlight = 0;

  /** @throws TypeError when `maxBatch` or `maxInFlight` is not an integer ≥ 1. */
  constructor(run: RunStatement, options: ClaimBatcherOptions = {}) {
    this.#run = run;
    this.#maxBatch = options.maxBatch ?? 64;
    this.#maxInFlight = options.maxInFlight ?? 2;
    for (const [name, v] of [
      ["maxBatch", this.#maxBatch],
      ["maxInFlight", this.#maxInFlight],
    ] as const)
      if (!Number.isInteger(v) || v < 1) throw new TypeError(`ClaimBatcher: ${name} must be an integer ≥ 1`);
  }

  /**
   * Claims through the next batch. Resolves after the batch's commit (durable) with the claim's own
   * result (`existing: null` when the winner committed after the statement's snapshot: read it again).
   * @throws RangeError for a non-finite time; the database's error when the claim's own statement fails.
   */
  claim(claim: BatchedClaim): Promise<BatchClaimResult> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ claim, resolve, reject });
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#inFlight < this.#maxInFlight && this.#queue.length > 0) {
      const batch: Waiting[] = [];
      const rest: Waiting[] = [];
      for (const w of this.#queue) {
        if (batch.length < this.#maxBatch && !batch.some((b) => conflictsWithin(b.claim, w.claim))) batch.push(w);
        else rest.push(w);
      }
      this.#queue = rest;
      this.#inFlight++;
      this.stats.batches++;
      this.stats.claims += batch.length;
      void this.#send(batch).finally(() => {
        this.#inFlight--;
        this.#pump();
      });
    }
  }

  async #send(batch: Waiting[]): Promise<void> {
    let rows: ClaimBatchRow[];
    try {
      rows = await this.#run<ClaimBatchRow>(claimBatchSql(batch.map((w) => w.claim)));
    } catch (error) {
      if (batch.length === 1) {
        batch[0]!.reject(error);
        return;
      }
      // One claim's bad value must not fail the others: each alone, in turn.
      for (const w of batch) await this.#send([w]);
      return;
    }
    for (const [i, w] of batch.entries()) {
      const row = rows[i];
      if (row?.i !== i) {
        w.reject(new Error(`claim batch returned row ${row?.i} for claim ${i}`));
      } else if (row.claimed_at) {
        w.resolve({ claimed: true, record: claimedRecord(w.claim, row.claimed_at) });
      } else if (row.key !== null) {
        w.resolve({ claimed: false, existing: toIntentRecord(row) });
      } else {
        w.resolve({ claimed: false, existing: null });
      }
    }
  }
}
