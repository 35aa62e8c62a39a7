import { PrismaPg } from "@prisma/adapter-pg";
import type {
  ClaimResult,
  IntentEvent,
  IntentPatch,
  IntentRecord,
  IntentStore,
  LeasedRecord,
  NewIntentRecord,
  PlanStep,
  RunAbort,
  RunAbortInput,
  StoredIntentEvent,
  WriteOptions,
} from "@tristate/core";
import { checkTenant, DEFAULT_TENANT, RunAbortedError } from "@tristate/core";
import pg from "pg";
import { parseIntoClientConfig } from "pg-connection-string";
import type { BatchedClaim } from "./claim-batch-sql.ts";
import { type BatchClaimResult, claimBatcher, type RunStatement } from "./claim-batcher.ts";
import { type Prisma, PrismaClient } from "./generated/prisma/client.ts";
import type { GroupCommit, GroupCommitOptions } from "./group-commit.ts";
import { type EventRow, type RecordRow, toIntentRecord, toStoredEvent } from "./intent-row.ts";
import {
  ARCHIVE_RACE_HINT,
  appendEventsSql,
  claimSql,
  claimStaleSql,
  existingSql,
  getSql,
  listByIdentitySql,
  listByRunSql,
  listEventsSql,
  type Statement,
  updateSql,
} from "./intent-sql.ts";
import { survivePoolErrors } from "./pool-errors.ts";
import { type DatabaseTimeouts, DEFAULT_DATABASE_TIMEOUTS, poolTimeoutConfig } from "./pool-timeouts.ts";
import { refusingForGood } from "./refused-write.ts";
import { restoreArchivedRunSql, restoreArchivedSql } from "./restore-archived-sql.ts";
import { getRunAbortSql, listUndoDueSql, markRunAbortedSql, type RunAbortRow, toRunAbort } from "./run-abort-sql.ts";
import type { BatchedUpdate } from "./update-batch-sql.ts";
import { type BatchedEventsRead, eventsReader, updateBatcher } from "./update-batcher.ts";

/** Options of {@link PrismaIntentStore}. */
export interface PrismaIntentStoreOptions {
  /** A `postgresql://` URL of a migrated database. */
  databaseUrl: string;
  /** Connections of the pool (claims, outcome writes, reads, Prisma's client). Default 10. */
  poolSize?: number;
  /**
   * The server runs one session (the embedded PGlite): the pool has one connection, and each new
   * connection first drops the session's prepared statements (`DEALLOCATE ALL`), since that one
   * session outlives the pool's connections and a new connection would prepare the same names again.
   */
  singleSession?: boolean;
  /**
   * Group commit: concurrent claims share one multi-row statement and one durable commit
   * ({@link claimBatcher}); `false` sends each claim alone. @default true
   */
  groupCommit?: boolean | GroupCommitOptions;
  /**
   * Group commit of outcome writes too: concurrent compare-and-sets of one shape share a statement
   * ({@link updateBatcher}), and concurrent timeline reads one `key = ANY` query ({@link eventsReader}):
   * the sweeper's many records at once. A write or read that goes alone runs the single-row statement. @default true
   */
  groupUpdates?: boolean | GroupCommitOptions;
  /** The tenant this store is confined to (see {@link PrismaIntentStore.forTenant}). @default "default" */
  tenant?: string;
  /**
   * Time limits of the pool: connecting, one statement (server and client side), idle in a
   * transaction (pool-timeouts.ts). @default DEFAULT_DATABASE_TIMEOUTS (5 s, 30 s, 60 s)
   */
  timeouts?: Partial<DatabaseTimeouts>;
}

/** The connections a store and its tenant views share. */
interface Shared {
  pool: pg.Pool;
  prisma: PrismaClient;
  closed: boolean;
  /** Null when group commit is off. */
  batcher: GroupCommit<BatchedClaim, BatchClaimResult> | null;
  /** Null when outcome writes are not grouped. */
  updates: GroupCommit<BatchedUpdate, IntentRecord | null> | null;
  /** Timeline reads grouped alongside (with `groupUpdates`); null when not. */
  events: GroupCommit<BatchedEventsRead, StoredIntentEvent[]> | null;
}

/**
 * The intent log on PostgreSQL. The port's methods are raw SQL, one statement each, through a `pg`
 * pool (run plans use Prisma's typed client over the same pool, `@prisma/adapter-pg`). Outcome writes with `{ durable: false }` set
 * `synchronous_commit = off` for their own transaction, so they do not wait for the WAL flush.
 */
export class PrismaIntentStore implements IntentStore {
  /** Prisma's typed client over the durable pool, for queries beyond the port (dashboards). */
  readonly prisma: PrismaClient;
  /** @inheritdoc */
  readonly tenant: string;
  readonly #shared: Shared;

  /**
   * @throws when the URL cannot be parsed (connections open lazily, on first use).
   * @throws TypeError for a tenant name that breaks `TENANT_PATTERN`.
   */
  constructor(options: PrismaIntentStoreOptions, shared?: Shared) {
    this.tenant = checkTenant(options.tenant ?? DEFAULT_TENANT);
    if (shared) {
      this.#shared = shared;
    } else {
      const config = parseIntoClientConfig(options.databaseUrl);
      const poolSize = options.singleSession ? 1 : (options.poolSize ?? 10);
      // JIT off for every session of the pool (issue 14): the dashboard's reads are small aggregates whose
      // estimates can pass jit_above_cost, and compiling cost more than running them (1.5 s of 1.9 s
      // measured); the hot path's statements never reach the threshold. PGlite has no JIT to turn off.
      const jitOff = options.singleSession ? {} : { options: [config.options, "-c jit=off"].filter(Boolean).join(" ") };
      // Named (prepared once per connection) statements. PGlite's one session outlives the pool's
      // connections and keeps what an earlier connection prepared: a new connection first drops it, before
      // the pool hands the client out (pg-pool's `onConnect` is awaited; unprepared, parsing each
      // statement cost PGlite 2–3×).
      const onConnect = options.singleSession
        ? async (client: pg.ClientBase) => {
            await client.query("DEALLOCATE ALL");
          }
        : undefined;
      // Bounded waits (issue 21 §1): a database that stops answering fails queries within the limits.
      const limits = poolTimeoutConfig({ ...DEFAULT_DATABASE_TIMEOUTS, ...options.timeouts }, !options.singleSession);
      const pool = new pg.Pool({ ...config, ...jitOff, ...limits, max: poolSize, ...(onConnect && { onConnect }) });
      survivePoolErrors(pool);
      const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
      const group = options.groupCommit ?? true;
      const run: RunStatement = async <T>(statement: Statement) => (await pool.query(statement)).rows as T[];
      const one = options.singleSession ? { maxInFlight: 1 } : {};
      const batcher = group === false ? null : claimBatcher(run, { ...one, ...(group === true ? {} : group) });
      const groupUpdates = options.groupUpdates ?? true;
      const updates =
        groupUpdates === false ? null : updateBatcher(run, { ...one, ...(groupUpdates === true ? {} : groupUpdates) });
      const events = updates && eventsReader(run, { ...one, ...(groupUpdates === true ? {} : groupUpdates) });
      this.#shared = { pool, prisma, closed: false, batcher, updates, events };
    }
    this.prisma = this.#shared.prisma;
  }

  /**
   * A view of the same log confined to `tenant`: the same pool and Prisma client, every statement
   * filtered by (and every write stamped with) that tenant. Closing any view closes them all.
   * @throws TypeError for a tenant name that breaks `TENANT_PATTERN`.
   */
  forTenant(tenant: string): PrismaIntentStore {
    return tenant === this.tenant ? this : new PrismaIntentStore({ databaseUrl: "", tenant }, this.#shared);
  }

  /** Group commit's counters (null when it is off): batch statements sent and the claims they held. */
  get claimBatchStats(): { batches: number; claims: number } | null {
    return this.#shared.batcher?.stats ?? null;
  }

  /** Grouped outcome writes' counters (null when off): batch statements sent and the writes they held. */
  get updateBatchStats(): { batches: number; claims: number } | null {
    return this.#shared.updates?.stats ?? null;
  }

  /** The `pg` pool (for health checks and raw queries beyond the port). */
  get pool(): pg.Pool {
    return this.#shared.pool;
  }

  async #query(statement: Statement): Promise<RecordRow[]> {
    const result = await this.#shared.pool.query<RecordRow>(statement);
    return result.rows;
  }

  /**
   * @inheritdoc
   * One statement (insert + events, or the existing row), shared with concurrent claims when group
   * commit is on; a second read only when a racing claim committed after this statement's snapshot.
   * Always durable (synchronous commit): it resolves only after its statement committed. A step the
   * archive holds is found there (rule 15) and moved back to the live table (one more statement, on
   * that path only); a claim the archiver raced is rolled back and made again (at most 3 times).
   * @throws RangeError for a non-finite deadline or time; pg errors when the database fails.
   */
  async claim(record: NewIntentRecord, events: IntentEvent[], nowEpochMs: number): Promise<ClaimResult> {
    if (record.tenant !== undefined && record.tenant !== this.tenant)
      throw new TypeError(`claim: record of tenant "${record.tenant}" in the store of tenant "${this.tenant}"`);
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#claimOnce(record, events, nowEpochMs);
      } catch (error) {
        const e = error as { code?: unknown; hint?: unknown };
        if (attempt >= 3 || e.code !== "40001" || e.hint !== ARCHIVE_RACE_HINT) throw error;
      }
    }
  }

  async #claimOnce(record: NewIntentRecord, events: IntentEvent[], nowEpochMs: number): Promise<ClaimResult> {
    const batcher = this.#shared.batcher;
    if (batcher) {
      const result = await batcher.write({ tenant: this.tenant, record, events, nowEpochMs });
      if (result.claimed) return result;
      if (result.existing && result.archived) return this.#unarchived(result.existing, record);
      if (result.existing) return { claimed: false, existing: result.existing };
      return this.#existing(record);
    }
    const rows = (await this.#query(claimSql(this.tenant, record, events, nowEpochMs))) as (RecordRow & {
      claimed: boolean;
      archived: boolean;
    })[];
    const live = rows.filter((r) => !r.archived);
    const row = live.find((r) => r.key === record.key) ?? live[0] ?? rows[0];
    if (row?.claimed) return { claimed: true, record: toIntentRecord(row) };
    if (row?.archived) return this.#unarchived(toIntentRecord(row), record);
    if (row) return { claimed: false, existing: toIntentRecord(row) };
    return this.#existing(record);
  }

  /** A claim found its step in the archive: the record moves back to the live table, where the executor writes. */
  async #unarchived(archived: IntentRecord, record: NewIntentRecord): Promise<ClaimResult> {
    const [back] = await this.#query(restoreArchivedSql(this.tenant, archived.key));
    if (back) return { claimed: false, existing: toIntentRecord(back) };
    return this.#existing(record, false); // another claim moved it back first
  }

  /**
   * A claim loser's second look: the winner committed after the claim's snapshot, or nothing won
   * because the run was aborted (rule 13).
   * @throws RunAbortedError when no record exists and the run was aborted.
   */
  async #existing(record: NewIntentRecord, restore = true): Promise<ClaimResult> {
    const [again] = (await this.#query(existingSql(this.tenant, record))) as (RecordRow & { archived: boolean })[];
    if (again?.archived && restore) return this.#unarchived(toIntentRecord(again), record);
    if (again) return { claimed: false, existing: toIntentRecord(again) };
    const abort = await this.getRunAbort(record.runId);
    if (abort) throw new RunAbortedError(abort);
    throw new Error(`claim of ${record.key} neither inserted nor found a record`);
  }

  /**
   * @inheritdoc
   * One statement; `abortedAtEpochMs` is the database's `now()` (rule 9).
   * @throws pg errors when the database fails.
   */
  async markRunAborted(runId: string, by: RunAbortInput): Promise<{ abort: RunAbort; first: boolean }> {
    const { rows } = await this.#shared.pool.query<RunAbortRow>(markRunAbortedSql(this.tenant, runId, by));
    const row = rows[0];
    if (row) return { abort: toRunAbort(row), first: row.first === true };
    // A racing abort committed after this statement's snapshot (its insert made ours skip): read it.
    const abort = await this.getRunAbort(runId);
    if (!abort) throw new Error(`run ${runId}: the abort was neither recorded nor found`);
    return { abort, first: false };
  }

  /** @inheritdoc */
  async getRunAbort(runId: string): Promise<RunAbort | null> {
    const { rows } = await this.#shared.pool.query<RunAbortRow>(getRunAbortSql(this.tenant, runId));
    return rows[0] ? toRunAbort(rows[0]) : null;
  }

  /** @inheritdoc */
  /** @inheritdoc */
  async restoreArchivedRun(runId: string): Promise<number> {
    return (await this.#query(restoreArchivedRunSql(this.tenant, runId))).length;
  }

  async listUndoDue(options: {
    settledByEpochMs: number;
    limit: number;
    uncorrectableTools?: readonly string[];
  }): Promise<IntentRecord[]> {
    const rows = await this.#query(
      listUndoDueSql(this.tenant, options.settledByEpochMs, options.limit, options.uncorrectableTools),
    );
    return rows.map(toIntentRecord);
  }

  /** @inheritdoc */
  async listByRun(runId: string): Promise<IntentRecord[]> {
    return (await this.#query(listByRunSql(this.tenant, runId))).map(toIntentRecord);
  }

  /** @inheritdoc */
  async listByIdentity(
    tool: string,
    identity: Record<string, string>,
    sinceEpochMs: number,
    excludeKey: string,
  ): Promise<IntentRecord[]> {
    return (await this.#query(listByIdentitySql(this.tenant, tool, identity, sinceEpochMs, excludeKey))).map(
      toIntentRecord,
    );
  }

  /**
   * @inheritdoc
   * PostgreSQL's `clock_timestamp()`: the one clock every replica's leases and settle windows are
   * judged by (rule 9), whatever the replicas' own clocks say.
   */
  async clockEpochMs(): Promise<number> {
    const { rows } = await this.#shared.pool.query<{ now: Date }>("SELECT clock_timestamp() AS now");
    const now = rows[0]?.now;
    if (!now) throw new Error("the database returned no clock_timestamp()");
    return now.getTime();
  }

  /** @inheritdoc */
  async savePlan(runId: string, steps: PlanStep[], nowEpochMs: number): Promise<void> {
    const updatedAt = new Date(nowEpochMs);
    const tenant = this.tenant;
    await this.prisma.runPlan.upsert({
      where: { tenant_runId: { tenant, runId } },
      create: { tenant, runId, steps: steps as unknown as Prisma.InputJsonValue, updatedAt },
      update: { steps: steps as unknown as Prisma.InputJsonValue, updatedAt },
    });
  }

  /** @inheritdoc */
  async getPlan(runId: string): Promise<PlanStep[] | null> {
    const row = await this.prisma.runPlan.findUnique({ where: { tenant_runId: { tenant: this.tenant, runId } } });
    return row ? (row.steps as unknown as PlanStep[]) : null;
  }

  async get(key: string): Promise<IntentRecord | null> {
    const [row] = await this.#query(getSql(this.tenant, key));
    return row ? toIntentRecord(row) : null;
  }

  /**
   * @inheritdoc
   * @throws RangeError for a non-finite time; WriteRefusedError when PostgreSQL refuses the values for
   *   good (refused-write.ts); other pg errors when the write fails.
   */
  async update(
    key: string,
    expectedVersion: number,
    patch: IntentPatch,
    events: IntentEvent[],
    nowEpochMs: number,
    options?: WriteOptions,
  ): Promise<IntentRecord | null> {
    const durable = options?.durable !== false;
    const onlyIfLeaseExpired = options?.onlyIfLeaseExpired === true;
    const updates = this.#shared.updates;
    return refusingForGood(async () => {
      if (updates) {
        const tenant = this.tenant;
        return updates.write({ tenant, key, expectedVersion, patch, events, nowEpochMs, durable, onlyIfLeaseExpired });
      }
      const [row] = await this.#query(
        updateSql(this.tenant, key, expectedVersion, patch, events, nowEpochMs, { durable, onlyIfLeaseExpired }),
      );
      return row ? toIntentRecord(row) : null;
    });
  }

  /**
   * @inheritdoc
   * @throws when an event's key has no record (the events table references the records).
   */
  async appendEvents(events: IntentEvent[]): Promise<void> {
    if (events.length === 0) return;
    // Raw SQL on the pool, like the hot path: a reconciliation writes each probe round as it ends.
    await this.#shared.pool.query(appendEventsSql(this.tenant, events));
  }

  /** @inheritdoc */
  async listEvents(key: string): Promise<StoredIntentEvent[]> {
    if (this.#shared.events) return this.#shared.events.write({ tenant: this.tenant, key });
    const { rows } = await this.#shared.pool.query<EventRow>(listEventsSql(this.tenant, key));
    return rows.map(toStoredEvent);
  }

  /** @inheritdoc */
  async claimStale(options: { nowEpochMs: number; limit: number; leaseUntilEpochMs: number }): Promise<LeasedRecord[]> {
    if (options.limit <= 0) return [];
    const rows = (await this.#query(claimStaleSql(this.tenant, options))) as (RecordRow & {
      prev_status: "PENDING" | "UNKNOWN";
    })[];
    return rows.map((row) => ({ ...toIntentRecord(row), previousStatus: row.prev_status }));
  }

  /** Ends Prisma's client and the pool. Idempotent. */
  async close(): Promise<void> {
    if (this.#shared.closed) return;
    this.#shared.closed = true;
    await this.prisma.$disconnect();
    await this.#shared.pool.end();
  }
}

/**
 * Creates a {@link PrismaIntentStore} on an already migrated database.
 * @throws when the URL cannot be parsed.
 */
export function createPrismaIntentStore(options: PrismaIntentStoreOptions): PrismaIntentStore {
  return new PrismaIntentStore(options);
}
