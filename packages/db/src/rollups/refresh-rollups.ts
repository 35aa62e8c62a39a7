import { Prisma, type PrismaClient } from "../generated/prisma/client.ts";
import { histBucketSql, MINUTE_MS, ROLLUP_LEVELS_MS, SEAL_MARGIN_MS } from "./buckets.ts";
import { COUNT_AGGREGATES_SQL, COUNT_COLUMNS, sendsOf } from "./record-facts.ts";
import {
  type MinuteKey,
  type Queryable,
  recordsCreatedIn,
  recordsOfMinutes,
  tenantsWithRecords,
} from "./record-sources.ts";

/** Advisory lock key of the refresh: one replica refreshes at a time; the others skip their turn. */
const REFRESH_LOCK = 7_415_926_536;

/** Options of {@link refreshIntentRollups}. */
export interface RefreshRollupsOptions {
  /**
   * Most ms of records one refresh rolls up by creation time: a first refresh (or one after a long
   * pause) catches up in steps of this size, one transaction each. @default 86_400_000 (1 day)
   */
  maxRangeMs?: number;
  /** Longest the refresh's transaction may run, ms. @default 600_000 */
  timeoutMs?: number;
}

/** What {@link refreshIntentRollups} did. */
export interface RefreshRollupsResult {
  /** False when another replica was refreshing (nothing done). */
  refreshed: boolean;
  /** Records created in [fromEpochMs, toEpochMs) were rolled up again by time (epoch ms). */
  fromEpochMs: number;
  toEpochMs: number;
  /** Older minutes rolled up again because a record in them changed (the dirty queue). */
  dirtyMinutes: number;
  /** False while catching up: call again (at once) to go on. */
  caughtUp: boolean;
}

const ROLLUP_COLUMNS = `tenant, tool, bucket_ms, bucket_start, ${COUNT_COLUMNS.join(", ")}, latency_samples, latency_hist`;
const floorTo = (t: number, step: number) => Math.floor(t / step) * step;
const binSql = (levelMs: number, column: string) =>
  Prisma.raw(`date_bin(interval '${levelMs / 1000} seconds', ${column}, TIMESTAMPTZ 'epoch')`);

/**
 * The rollups' background step: rolls up again (1) the records created from the minute of the last
 * refresh's cut up to the new cut (its snapshot − {@link SEAL_MARGIN_MS}, to the ms: the minute row of
 * the cut, and the buckets above it, hold only the records before the cut), and (2) every older minute
 * in the dirty queue (a record created over 10 s before a write changed it — late resolutions, sweeps,
 * operator actions — or the compensated record of a compensation that changed), then the 10-min, hour
 * and day buckets above them; and moves the watermark (the snapshot, whole ms). One REPEATABLE READ
 * transaction; an advisory lock makes concurrent replicas take turns (the loser returns at once), and
 * dirty rows written after the snapshot stay queued for the next refresh, so no change is lost. Cost:
 * proportional to the records of the last minutes plus the dirty minutes; never on the hot path.
 * @throws the database's error (e.g. a serialization failure); the rollups are then unchanged.
 */
export async function refreshIntentRollups(
  prisma: PrismaClient,
  options: RefreshRollupsOptions = {},
): Promise<RefreshRollupsResult> {
  const maxRangeMs = Math.max(MINUTE_MS, floorTo(options.maxRangeMs ?? 86_400_000, MINUTE_MS));
  return prisma.$transaction((tx) => refreshIn(tx, maxRangeMs), {
    isolationLevel: Prisma.TransactionIsolationLevel.RepeatableRead,
    timeout: options.timeoutMs ?? 600_000,
    maxWait: 10_000,
  });
}

async function refreshIn(tx: Queryable, maxRangeMs: number): Promise<RefreshRollupsResult> {
  const [lock] = await tx.$queryRaw<{ ok: boolean }[]>`SELECT pg_try_advisory_xact_lock(${REFRESH_LOCK}::bigint) AS ok`;
  if (!lock?.ok) return { refreshed: false, fromEpochMs: 0, toEpochMs: 0, dirtyMinutes: 0, caughtUp: true };
  // Small aggregates over estimated-large inputs: JIT compilation would cost more than the query.
  await tx.$executeRaw`SET LOCAL jit = off`;
  const [state] = await tx.$queryRaw<{ refreshed: number | null; now: number }[]>`
    SELECT (SELECT extract(epoch FROM refreshed_to) * 1000 FROM intent_rollup_state WHERE id = 1)::float8 AS refreshed,
      (extract(epoch FROM now()) * 1000)::float8 AS now`;
  // Whole ms: the watermark is stored at ms precision and the overview cuts at watermark − margin.
  const now = Math.floor(state!.now);
  const tenants = await tenantsWithRecords(tx);
  let lo: number;
  if (!state!.refreshed) {
    const [first] = await tx.$queryRaw<{ t: number | null }[]>`
      SELECT (extract(epoch FROM min(m)) * 1000)::float8 AS t FROM unnest(${tenants}::text[]) AS s(tenant),
        LATERAL (SELECT min(created_at) AS m FROM intent_records WHERE tenant = s.tenant
                 UNION ALL SELECT min(created_at) FROM intent_records_archive WHERE tenant = s.tenant) x`;
    lo = floorTo(Math.min(first?.t ?? now, now - SEAL_MARGIN_MS), MINUTE_MS);
  } else {
    // The minute of the last cut: its row held only the records before the cut.
    lo = floorTo(state!.refreshed - SEAL_MARGIN_MS, MINUTE_MS);
  }
  const caughtUp = lo + maxRangeMs >= now - SEAL_MARGIN_MS;
  // The cut: records created before it are rolled up (the last minute row, and the buckets above it,
  // hold only the records before the cut); the overview reads the rest raw. Caught up, it is the
  // sealed horizon itself (not its minute), so the raw tail is never more than the margin + the
  // time since the refresh.
  const hi = caughtUp ? now - SEAL_MARGIN_MS : lo + maxRangeMs;
  const newWatermark = hi + SEAL_MARGIN_MS;

  const dirtyRows = await tx.$queryRaw<{ tenant: string; tool: string; minute_ms: number }[]>`
    DELETE FROM intent_rollup_dirty WHERE minute < ${new Date(hi)}::timestamptz
    RETURNING tenant, tool, (extract(epoch FROM minute) * 1000)::float8 AS minute_ms`;
  const dirty = dedupe(
    dirtyRows.map((d) => ({ tenant: d.tenant, tool: d.tool, minuteMs: d.minute_ms })),
    MINUTE_MS,
    lo,
    hi,
  );

  await rebuildMinutes(tx, tenants, lo, hi, dirty);
  for (let i = 1; i < ROLLUP_LEVELS_MS.length; i++) {
    await rebuildLevel(tx, ROLLUP_LEVELS_MS[i]!, ROLLUP_LEVELS_MS[i - 1]!, lo, hi, dirtyRows);
  }
  await tx.$executeRaw`
    INSERT INTO intent_rollup_state (id, refreshed_to) VALUES (1, ${new Date(newWatermark)}::timestamptz)
    ON CONFLICT (id) DO UPDATE SET refreshed_to = EXCLUDED.refreshed_to`;
  return { refreshed: true, fromEpochMs: lo, toEpochMs: hi, dirtyMinutes: dirty.length, caughtUp };
}

/** The keys floored to `levelMs`, once each, leaving out buckets the time range [lo, hi) rebuilds anyway. */
function dedupe(keys: MinuteKey[], levelMs: number, lo: number, hi: number): MinuteKey[] {
  const seen = new Map<string, MinuteKey>();
  const rangeFrom = floorTo(lo, levelMs);
  for (const k of keys) {
    const bucket = floorTo(k.minuteMs, levelMs);
    if (bucket >= rangeFrom && bucket < hi) continue;
    seen.set(JSON.stringify([k.tenant, k.tool, bucket]), { tenant: k.tenant, tool: k.tool, minuteMs: bucket });
  }
  return [...seen.values()];
}

/** Deletes the rollup rows of level `levelMs` in [floor(lo), hi) and of the given keys. */
async function clearLevel(tx: Queryable, levelMs: number, lo: number, hi: number, keys: MinuteKey[]): Promise<void> {
  await tx.$executeRaw`DELETE FROM intent_rollups WHERE bucket_ms = ${levelMs}::int
    AND bucket_start >= ${new Date(floorTo(lo, levelMs))}::timestamptz AND bucket_start < ${new Date(hi)}::timestamptz`;
  if (keys.length === 0) return;
  await tx.$executeRaw`DELETE FROM intent_rollups u
    USING unnest(${keys.map((k) => k.tenant)}::text[], ${keys.map((k) => k.tool)}::text[],
      ${keys.map((k) => k.minuteMs)}::float8[]) AS d(tenant, tool, bucket_ms_at)
    WHERE u.tenant = d.tenant AND u.bucket_ms = ${levelMs}::int
      AND u.bucket_start = to_timestamp(d.bucket_ms_at / 1000.0) AND u.tool = d.tool`;
}

/** Minute rows from the records themselves (counts) and their outcome events (latency histogram). */
async function rebuildMinutes(tx: Queryable, tenants: string[], lo: number, hi: number, dirty: MinuteKey[]) {
  await clearLevel(tx, MINUTE_MS, lo, hi, dirty);
  const records = dirty.length
    ? Prisma.sql`${recordsCreatedIn(tenants, lo, hi)} UNION ALL ${recordsOfMinutes(dirty)}`
    : recordsCreatedIn(tenants, lo, hi);
  const bin = binSql(MINUTE_MS, "r.created_at");
  await tx.$executeRaw`
    WITH rec AS MATERIALIZED (${records}),
    counts AS (
      SELECT r.tenant, r.tool, ${bin} AS b, ${Prisma.raw(COUNT_AGGREGATES_SQL)}
      FROM rec r GROUP BY 1, 2, 3
    ),
    sends AS (${sendsOf(Prisma.sql`SELECT * FROM rec`)}),
    per_bucket AS (
      SELECT r.tenant, r.tool, ${bin} AS b, ${Prisma.raw(histBucketSql("r.duration_ms"))} AS k, count(*)::int AS n
      FROM sends r GROUP BY 1, 2, 3, 4
    ),
    lat AS (
      SELECT tenant, tool, b, sum(n)::int AS samples, jsonb_object_agg(k::text, n) AS hist FROM per_bucket GROUP BY 1, 2, 3
    )
    INSERT INTO intent_rollups (${Prisma.raw(ROLLUP_COLUMNS)})
    SELECT c.tenant, c.tool, ${MINUTE_MS}::int, c.b, ${Prisma.raw(COUNT_COLUMNS.map((col) => `c.${col}`).join(", "))},
      coalesce(l.samples, 0), coalesce(l.hist, '{}'::jsonb)
    FROM counts c LEFT JOIN lat l USING (tenant, tool, b)`;
}

/** Rows of level `levelMs` as sums of the level below (`lowerMs`), for the time range and the dirty minutes. */
async function rebuildLevel(
  tx: Queryable,
  levelMs: number,
  lowerMs: number,
  lo: number,
  hi: number,
  dirtyRows: { tenant: string; tool: string; minute_ms: number }[],
) {
  const keys = dedupe(
    dirtyRows.map((d) => ({ tenant: d.tenant, tool: d.tool, minuteMs: d.minute_ms })),
    levelMs,
    lo,
    hi,
  );
  await clearLevel(tx, levelMs, lo, hi, keys);
  const byKeys = keys.length
    ? Prisma.sql`UNION ALL SELECT u.* FROM unnest(${keys.map((k) => k.tenant)}::text[], ${keys.map((k) => k.tool)}::text[],
          ${keys.map((k) => k.minuteMs)}::float8[]) AS d(tenant, tool, at_ms)
        JOIN intent_rollups u ON u.tenant = d.tenant AND u.bucket_ms = ${lowerMs}::int AND u.tool = d.tool
          AND u.bucket_start >= to_timestamp(d.at_ms / 1000.0) AND u.bucket_start < to_timestamp((d.at_ms + ${levelMs}) / 1000.0)`
    : Prisma.empty;
  const bin = binSql(levelMs, "u.bucket_start");
  await tx.$executeRaw`
    WITH src AS MATERIALIZED (
      SELECT u.* FROM intent_rollups u WHERE u.bucket_ms = ${lowerMs}::int
        AND u.bucket_start >= ${new Date(floorTo(lo, levelMs))}::timestamptz AND u.bucket_start < ${new Date(hi)}::timestamptz
      ${byKeys}
    ),
    sums AS (
      SELECT u.tenant, u.tool, ${bin} AS b, ${Prisma.raw([...COUNT_COLUMNS, "latency_samples"].map((c) => `sum(u.${c})::int AS ${c}`).join(", "))}
      FROM src u GROUP BY 1, 2, 3
    ),
    hist AS (
      SELECT tenant, tool, b, jsonb_object_agg(k, n) AS h FROM (
        SELECT u.tenant, u.tool, ${bin} AS b, kv.key AS k, sum(kv.value::int)::int AS n
        FROM src u, jsonb_each_text(u.latency_hist) kv GROUP BY 1, 2, 3, 4
      ) x GROUP BY 1, 2, 3
    )
    INSERT INTO intent_rollups (${Prisma.raw(ROLLUP_COLUMNS)})
    SELECT s.tenant, s.tool, ${levelMs}::int, s.b, ${Prisma.raw(COUNT_COLUMNS.map((col) => `s.${col}`).join(", "))},
      s.latency_samples, coalesce(h.h, '{}'::jsonb)
    FROM sums s LEFT JOIN hist h USING (tenant, tool, b)`;
}
