/**
 * The statements of `statsOverview`: counts and latency from the rollups for whole buckets before the
 * sealed horizon, raw rows for the ragged edges and the records after the horizon, and a correction
 * for every minute in the rollups' dirty queue (its raw rows replace its rollup row); stale PENDING
 * from its partial index. Each statement reads one snapshot.
 */
import { Prisma } from "../generated/prisma/client.ts";
import { decompose, histBucketSql, MINUTE_MS, SEAL_MARGIN_MS, type Segment } from "../rollups/buckets.ts";
import { COUNT_AGGREGATES_SQL, COUNT_COLUMNS, FACT_COLUMNS, sendsOf } from "../rollups/record-facts.ts";

/** A segment of the window attributed to a sparkline slice (−1: the previous period). */
export interface SliceSegment extends Segment {
  slice: number;
  /**
   * Set on the rollups' cut minute (a rollup segment ending at the cut): the cut, epoch ms. That
   * minute's row holds only the records before this cut, so a statement whose snapshot sees a later
   * refresh (another cut) reads the segment raw instead.
   */
  cutMs?: number;
}

/** Counts of one (slice, tool). */
export interface CountRow {
  slice: number;
  tool: string;
  calls: number;
  unknown: number;
  found: number;
  absent_resent: number;
  human_confirmed_effect: number;
  human_confirmed_no_effect: number;
  human_resent: number;
  open: number;
  other: number;
  /** Records with a compensation run, and those whose compensation failed. */
  compensations_run: number;
  compensations_failed: number;
}

/**
 * Latency histogram rows of a tool: a rollup row's whole histogram (`hist`, bucket → count) times `n`
 * (1, or −1 for a dirty minute's rollup row that its records replace), or `n` raw sends in bucket `k`
 * (see `histBucketOf`; `hist` null).
 */
export interface HistRow {
  tool: string;
  k: number | null;
  n: number;
  hist: Record<string, number> | null;
}

/** Exact percentiles of a tool's raw sends (tool null: all tools). */
export interface ExactLatencyRow {
  tool: string | null;
  samples: number;
  p50: number | null;
  p95: number | null;
  p99: number | null;
}

const ts = (ms: string) => `(TIMESTAMPTZ 'epoch' + (${ms}) * interval '1 millisecond')`;

function segmentsCte(segments: SliceSegment[]): Prisma.Sql {
  // A cut minute whose cut is not this snapshot's (a refresh committed since the watermark was read)
  // becomes a raw segment (level 0): its row may now hold records the raw tail reads too.
  return Prisma.sql`seg AS (
    SELECT s.slice, CASE WHEN s.cut IS NOT NULL AND s.cut IS DISTINCT FROM w.cut THEN 0 ELSE s.lvl END AS lvl,
      s.lo, s.hi
    FROM unnest(${segments.map((s) => s.slice)}::int[], ${segments.map((s) => s.levelMs)}::int[],
      ${segments.map((s) => s.fromMs)}::float8[], ${segments.map((s) => s.toMs)}::float8[],
      ${segments.map((s) => s.cutMs ?? null)}::float8[]) AS s(slice, lvl, lo, hi, cut),
    (SELECT (SELECT extract(epoch FROM refreshed_to) * 1000 - ${SEAL_MARGIN_MS}
             FROM intent_rollup_state WHERE id = 1)::float8 AS cut) w
  )`;
}

/** Raw fact rows per raw segment (`s.slice` with the record's columns), hot and archived. */
function rawRecords(tenants: string[]): Prisma.Sql {
  const where = Prisma.sql`r.tenant = ANY(${tenants}::text[])
      AND r.created_at >= ${Prisma.raw(ts("s.lo"))} AND r.created_at < ${Prisma.raw(ts("s.hi"))}`;
  return Prisma.sql`SELECT s.slice, r.* FROM seg s CROSS JOIN LATERAL (
      SELECT ${Prisma.raw(FACT_COLUMNS)} FROM intent_records r WHERE ${where}
      UNION ALL SELECT ${Prisma.raw(FACT_COLUMNS)} FROM intent_records_archive r WHERE ${where}
    ) r WHERE s.lvl = 0`;
}

/**
 * Dirty minutes inside rollup segments (once each), and their records: those of the whole minute, or
 * of its part before the segment's end (the cut's minute row holds only the records before the cut).
 */
function dirtyCtes(tenants: string[]): Prisma.Sql {
  const minuteWhere = (table: string) => `SELECT ${FACT_COLUMNS} FROM ${table} r
      WHERE r.tenant = d.tenant AND r.tool = d.tool AND r.created_at >= d.minute
        AND r.created_at < least(d.minute + interval '1 minute', ${ts("d.hi")})`;
  return Prisma.sql`dirty AS (
    SELECT DISTINCT s.slice, s.hi, d.tenant, d.tool, d.minute FROM seg s
    JOIN intent_rollup_dirty d ON d.tenant = ANY(${tenants}::text[])
      AND d.minute >= ${Prisma.raw(ts("s.lo"))} AND d.minute < ${Prisma.raw(ts("s.hi"))}
    WHERE s.lvl > 0
  ),
  dirty_rollups AS (
    SELECT d.slice, u.* FROM dirty d JOIN intent_rollups u
      ON u.tenant = d.tenant AND u.bucket_ms = 60000 AND u.bucket_start = d.minute AND u.tool = d.tool
  ),
  dirty_records AS (
    SELECT d.slice, r.* FROM dirty d CROSS JOIN LATERAL (
      ${Prisma.raw(minuteWhere("intent_records"))} UNION ALL ${Prisma.raw(minuteWhere("intent_records_archive"))}
    ) r
  )`;
}

/**
 * Rollup rows (`u`: `slice`, `tool` and `columns`) of the rollup segments, of the tenants: one range of
 * an index led by (tenant, bucket_ms, bucket_start, tool) per segment — for the count columns, an
 * index-only scan of `intent_rollups_counts_idx`. `OFFSET 0` keeps the subquery from being pulled up
 * into a join: as a join, the planner's estimate of the segments (a function scan) made it hash the
 * segments and scan every rollup row of the tenant (1.45 M rows, 6.5 s at 10 M records, EXPLAIN).
 */
function rollupRows(tenants: string[], columns: readonly string[]): Prisma.Sql {
  return Prisma.sql`SELECT s.slice, u.* FROM seg s CROSS JOIN LATERAL (
      SELECT ${Prisma.raw(["tool", ...columns].map((c) => `u.${c}`).join(", "))}
      FROM intent_rollups u WHERE u.tenant = ANY(${tenants}::text[]) AND u.bucket_ms = s.lvl
        AND u.bucket_start >= ${Prisma.raw(ts("s.lo"))} AND u.bucket_start < ${Prisma.raw(ts("s.hi"))}
      OFFSET 0
    ) u WHERE s.lvl > 0`;
}

/** Counts per (slice, tool): rollups + raw − dirty rollup rows + dirty minutes' records. */
export function countsSql(tenants: string[], segments: SliceSegment[]): Prisma.Sql {
  const sums = COUNT_COLUMNS.map((c) => `sum(x.${c})::int AS ${c}`).join(", ");
  const rollupSums = (sign: string) => COUNT_COLUMNS.map((c) => `${sign}sum(u.${c}) AS ${c}`).join(", ");
  return Prisma.sql`
    WITH ${segmentsCte(segments)}, ${dirtyCtes(tenants)}
    SELECT x.slice, x.tool, ${Prisma.raw(sums)} FROM (
      SELECT u.slice, u.tool, ${Prisma.raw(rollupSums(""))} FROM (${rollupRows(tenants, COUNT_COLUMNS)}) u GROUP BY 1, 2
      UNION ALL
      SELECT r.slice, r.tool, ${Prisma.raw(COUNT_AGGREGATES_SQL)} FROM (${rawRecords(tenants)}) r GROUP BY 1, 2
      UNION ALL
      SELECT u.slice, u.tool, ${Prisma.raw(rollupSums("-"))} FROM dirty_rollups u GROUP BY 1, 2
      UNION ALL
      SELECT r.slice, r.tool, ${Prisma.raw(COUNT_AGGREGATES_SQL)} FROM dirty_records r GROUP BY 1, 2
    ) x GROUP BY 1, 2`;
}

/**
 * Latency histogram rows per tool over the window's slices (slice ≥ 0), with the same corrections: the
 * rollup rows' histograms as they are (the caller adds them up: expanding ~1,400 histograms of a 30-day
 * window into ~30,000 (bucket, count) rows in SQL cost 36 ms at 10 M records, EXPLAIN), and the raw
 * sends counted per (tool, bucket).
 */
export function histogramSql(tenants: string[], segments: SliceSegment[]): Prisma.Sql {
  const window = segments.filter((s) => s.slice >= 0);
  const k = Prisma.raw(histBucketSql("r.duration_ms"));
  return Prisma.sql`
    WITH ${segmentsCte(window)}, ${dirtyCtes(tenants)}
    SELECT u.tool, NULL::int AS k, 1 AS n, u.latency_hist AS hist
    FROM (${rollupRows(tenants, ["latency_hist"])}) u WHERE u.latency_hist <> '{}'::jsonb
    UNION ALL
    SELECT u.tool, NULL::int, -1, u.latency_hist FROM dirty_rollups u WHERE u.latency_hist <> '{}'::jsonb
    UNION ALL
    SELECT r.tool, ${k}, count(*)::int, NULL::jsonb
    FROM (${sendsOf(Prisma.sql`${rawRecords(tenants)} UNION ALL SELECT * FROM dirty_records`)}) r
    GROUP BY 1, 2`;
}

/** Exact percentiles (percentile_cont) of the sends of records in raw segments of the window. */
export function exactLatencySql(tenants: string[], segments: SliceSegment[]): Prisma.Sql {
  const window = segments.filter((s) => s.slice >= 0);
  return Prisma.sql`
    WITH ${segmentsCte(window)}
    SELECT r.tool, count(*)::int AS samples,
      percentile_cont(0.5) WITHIN GROUP (ORDER BY r.duration_ms) AS p50,
      percentile_cont(0.95) WITHIN GROUP (ORDER BY r.duration_ms) AS p95,
      percentile_cont(0.99) WITHIN GROUP (ORDER BY r.duration_ms) AS p99
    FROM (${sendsOf(rawRecords(tenants))}) r
    GROUP BY GROUPING SETS ((r.tool), ())`;
}

/**
 * Stale PENDING per tool (lease before `nowMs`, whatever the window): an index-only scan of the
 * live-recheck partial index (`status = 'PENDING'` implies its predicate; a PENDING record's re-check
 * is its lease end, so `recheck_at` bounds the range and the lease is compared in the index). No redundant
 * `status IN ('PENDING', 'UNKNOWN')`: the planner multiplied the two selectivities, expected 133 of the
 * 20,000 stale rows at 10 M records and sorted them by tool (13 ms) instead of hashing (EXPLAIN).
 */
export function staleSql(tenants: string[], nowMs: number): Prisma.Sql {
  return Prisma.sql`
    SELECT tool, count(*)::int AS n, min(lease_until_at) AS oldest FROM intent_records
    WHERE tenant = ANY(${tenants}::text[]) AND status = 'PENDING'
      AND recheck_at < ${new Date(nowMs)}::timestamptz AND lease_until_at < ${new Date(nowMs)}::timestamptz
    GROUP BY tool`;
}

/** The rollups' watermark, epoch ms (0: never refreshed). */
export const WATERMARK_SQL = Prisma.sql`
  SELECT coalesce((SELECT extract(epoch FROM refreshed_to) * 1000 FROM intent_rollup_state WHERE id = 1), 0)::float8 AS ms`;

/**
 * [fromMs, toMs) before the sealed horizon as rollup and raw segments ({@link decompose}); when `toMs` is
 * the horizon itself (`sealedMs`) and the range holds the start of its minute, that minute's rollup row
 * (which holds only the records before the horizon; `cutMs` set) instead of a raw edge.
 */
function sealedSegments(fromMs: number, toMs: number, sealedMs: number): (Segment & { cutMs?: number })[] {
  const minute = Math.floor(toMs / MINUTE_MS) * MINUTE_MS;
  if (toMs !== sealedMs || minute === toMs || fromMs > minute) return decompose(fromMs, toMs);
  return [...decompose(fromMs, minute), { levelMs: MINUTE_MS, fromMs: minute, toMs, cutMs: sealedMs }];
}

/**
 * The window's slices (and the previous period, slice −1) cut at the sealed horizon (the rollups' cut,
 * to the ms): before it, whole rollup buckets, the cut's partial minute row and raw edges under a
 * minute ({@link sealedSegments}); after it, raw rows.
 */
export function sliceSegments(
  fromEpochMs: number,
  toEpochMs: number,
  buckets: number,
  prevFromEpochMs: number,
  sealedMs: number,
): SliceSegment[] {
  const windowMs = toEpochMs - fromEpochMs;
  const ranges: [number, number, number][] = [[-1, prevFromEpochMs, fromEpochMs]];
  for (let i = 0; i < buckets; i++) {
    const a = fromEpochMs + Math.ceil((i * windowMs) / buckets);
    const b = i === buckets - 1 ? toEpochMs : fromEpochMs + Math.ceil(((i + 1) * windowMs) / buckets);
    ranges.push([i, a, b]);
  }
  const out: SliceSegment[] = [];
  for (const [slice, a, b] of ranges) {
    const cut = Math.max(a, Math.min(b, sealedMs));
    for (const seg of sealedSegments(a, cut, sealedMs)) out.push({ slice, ...seg });
    if (cut < b) out.push({ slice, levelMs: 0, fromMs: cut, toMs: b });
  }
  return out;
}

/** The whole window (slice 0) cut at the sealed horizon: the latency histogram needs no slices. */
export function windowSegments(fromEpochMs: number, toEpochMs: number, sealedMs: number): SliceSegment[] {
  const cut = Math.max(fromEpochMs, Math.min(toEpochMs, sealedMs));
  const out: SliceSegment[] = sealedSegments(fromEpochMs, cut, sealedMs).map((seg) => ({ slice: 0, ...seg }));
  if (cut < toEpochMs) out.push({ slice: 0, levelMs: 0, fromMs: cut, toMs: toEpochMs });
  return out;
}
