/** Options of {@link GroupCommit}. */
export interface GroupCommitOptions {
  /** Most writes in one statement. @default 64 */
  maxBatch?: number;
  /** Batch statements in flight at once (each on its own pooled connection). @default 2 */
  maxInFlight?: number;
  /** Run a write that goes alone through the multi-row statement too (tests of that statement). @default false */
  alwaysBatch?: boolean;
}

/** What a {@link GroupCommit} batches: how its writes combine and how a batch is run. */
export interface GroupCommitSpec<T, R> {
  /** Whether `b` may join a batch that holds `a` (same statement shape, and not competing for one row). */
  fits(a: T, b: T): boolean;
  /** Runs one batch as one statement (one commit); one result per write, in order. */
  run(batch: T[]): Promise<R[]>;
  /** Runs a write that goes alone (the single-row statement, when it is cheaper); default `run([item])`. */
  runOne?(item: T): Promise<R>;
}

interface Waiting<T, R> {
  item: T;
  resolve(result: R): void;
  reject(error: unknown): void;
}

/**
 * Group commit. A write that arrives while fewer than `maxInFlight` batches are running goes out at
 * once (alone, when nothing else waits), so a sequential caller waits for nothing extra; writes that
 * arrive while the limit is reached queue and leave together in the next multi-row statement: one
 * round trip and one WAL flush for all of them. The added wait is therefore at most one batch's round
 * trip, and only under concurrency, when it is shared.
 *
 * Each write's promise settles only after the statement that holds it has committed. Writes that do
 * not fit together (see {@link GroupCommitSpec.fits}) never share a batch: a later one waits for the
 * next. When a batch of several fails, each of its writes is retried alone, so one bad write fails only itself.
 */
export class GroupCommit<T, R> {
  readonly #spec: GroupCommitSpec<T, R>;
  readonly #maxBatch: number;
  readonly #maxInFlight: number;
  readonly #alwaysBatch: boolean;
  /** Batch statements sent and the writes they held (writes / batches = the mean batch size). */
  readonly stats = { batches: 0, claims: 0 };
  #queue: Waiting<T, R>[] = [];
  #inFlight = 0;

  /** @throws TypeError when `maxBatch` or `maxInFlight` is not an integer ≥ 1. */
  constructor(spec: GroupCommitSpec<T, R>, options: GroupCommitOptions = {}) {
    this.#spec = spec;
    this.#maxBatch = options.maxBatch ?? 64;
    this.#maxInFlight = options.maxInFlight ?? 2;
    this.#alwaysBatch = options.alwaysBatch ?? false;
    for (const [name, v] of [
      ["maxBatch", this.#maxBatch],
      ["maxInFlight", this.#maxInFlight],
    ] as const)
      if (!Number.isInteger(v) || v < 1) throw new TypeError(`GroupCommit: ${name} must be an integer ≥ 1`);
  }

  /**
   * Writes `item` through the next batch; resolves after that batch's commit with its own result.
   * @throws the database's error when the write's own statement fails.
   */
  write(item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#inFlight < this.#maxInFlight && this.#queue.length > 0) {
      const batch: Waiting<T, R>[] = [];
      const rest: Waiting<T, R>[] = [];
      for (const w of this.#queue) {
        if (batch.length < this.#maxBatch && batch.every((b) => this.#spec.fits(b.item, w.item))) batch.push(w);
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

  async #send(batch: Waiting<T, R>[]): Promise<void> {
    let results: R[];
    try {
      const runOne = this.#alwaysBatch ? undefined : this.#spec.runOne;
      results =
        runOne && batch.length === 1 ? [await runOne(batch[0]!.item)] : await this.#spec.run(batch.map((w) => w.item));
      if (results.length !== batch.length)
        throw new Error(`batch of ${batch.length} returned ${results.length} results`);
    } catch (error) {
      if (batch.length === 1) {
        batch[0]!.reject(error);
        return;
      }
      // One write's bad value must not fail the others: each alone, in turn.
      for (const w of batch) await this.#send([w]);
      return;
    }
    for (const [i, w] of batch.entries()) w.resolve(results[i]!);
  }
}
