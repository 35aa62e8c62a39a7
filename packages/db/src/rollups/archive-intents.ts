import { Prisma, type PrismaClient } from "../generated/prisma/client.ts";

/** Options of {@link archiveIntents}. */
export interface ArchiveOptions {
  /**
   * Records created before this instant (epoch ms) are moved: now − (the catalog's longest key
   * retention + the configured retention period). A record's key no longer protects after key
   * retention, so nothing on the hot path looks it up by key any more.
   */
  olderThanEpochMs: number;
  /** Most records moved per tenant and call (one statement each). @default 5_000 */
  batch?: number;
}

/** What {@link archiveIntents} did. */
export interface ArchiveResult {
  /** Records moved (with their timelines) to `intent_records_archive` / `intent_events_archive`. */
  moved: number;
  /** True when a tenant had a full batch: call again to go on. */
  more: boolean;
}

/** Every column of `intent_records` and `intent_records_archive`, in one order (the move's and the restore's). */
export const ARCHIVED_COLUMNS = `tenant, key, run_id, step_id, tool, args, identity, status, attempt, lease_until_at, recheck_at, result, error,
  compensation, resolution, needs_human, reconcile_sweeps, version, created_at, updated_at, finished_at, trace_id,
  sent_key, settles_at, ever_unknown`;

/**
 * Retention's background step: moves settled records (SUCCEEDED or FAILED_NO_EFFECT, not waiting for a
 * person) created and last written before `olderThanEpochMs` (a record a claim just moved back from the
 * archive, restore-archived-sql.ts, is written now: it stays until the next cut passes it), oldest first, with their events, out of the hot tables
 * into the archive tables — one statement per tenant, so a record is in exactly one table at any
 * snapshot. Rows other transactions hold are skipped (`SKIP LOCKED`): replicas may run it concurrently.
 * Live records (PENDING, UNKNOWN, the human queue) stay however old. The deletes go by primary key
 * (`key = ANY(ARRAY(…))`), never by a join the planner could turn into a scan of the table. The read side finds archived
 * records by key (`getIntent`) and run (`getRun`); the rollups and the overview count both tables.
 * @throws the database's error; nothing is moved then.
 */
export async function archiveIntents(prisma: PrismaClient, options: ArchiveOptions): Promise<ArchiveResult> {
  const batch = options.batch ?? 5_000;
  const tenants = await prisma.$queryRaw<{ tenant: string }[]>(Prisma.sql`
    WITH RECURSIVE t(tenant) AS (
      SELECT min(tenant) FROM intent_records
      UNION ALL SELECT (SELECT min(tenant) FROM intent_records WHERE tenant > t.tenant) FROM t WHERE t.tenant IS NOT NULL
    ) SELECT tenant FROM t WHERE tenant IS NOT NULL`);
  let moved = 0;
  let more = false;
  for (const { tenant } of tenants) {
    const rows = await prisma.$queryRaw<{ n: number }[]>(Prisma.sql`
      WITH victims AS (
        SELECT tenant, key FROM intent_records
        WHERE tenant = ${tenant} AND created_at < ${new Date(options.olderThanEpochMs)}::timestamptz
          AND updated_at < ${new Date(options.olderThanEpochMs)}::timestamptz
          AND status IN ('SUCCEEDED', 'FAILED_NO_EFFECT') AND NOT needs_human
        ORDER BY created_at, key LIMIT ${batch}::int
        FOR UPDATE SKIP LOCKED
      ), ev AS (
        DELETE FROM intent_events e WHERE e.tenant = ${tenant} AND e.key = ANY (ARRAY(SELECT key FROM victims))
        RETURNING e.id, e.tenant, e.key, e.type, e.at, e.data
      ), ev_moved AS (
        INSERT INTO intent_events_archive (id, tenant, key, type, at, data) SELECT * FROM ev
      ), rec AS (
        DELETE FROM intent_records r WHERE r.tenant = ${tenant} AND r.key = ANY (ARRAY(SELECT key FROM victims))
        RETURNING ${Prisma.raw(ARCHIVED_COLUMNS.replace(/(\w+)/g, "r.$1"))}
      ), rec_moved AS (
        INSERT INTO intent_records_archive (${Prisma.raw(ARCHIVED_COLUMNS)}) SELECT * FROM rec RETURNING 1
      )
      SELECT count(*)::int AS n FROM rec_moved`);
    const n = rows[0]?.n ?? 0;
    moved += n;
    if (n >= batch) more = true;
  }
  return { moved, more };
}
