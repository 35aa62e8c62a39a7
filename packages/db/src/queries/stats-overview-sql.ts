/**
 * The statements of `statsOverview`: counts and latency from the rollups for whole buckets before the
 * sealed horizon, raw rows for the ragged edges and the last minutes, and a correction for every
 * minute in the rollups' dirty queue (its raw rows replace its rollup row); stale PENDING and
 * compensations from their partial indexes. Each statement reads one snapshot.
 */
import { Prisma } from "../generated/prisma/client.ts";
import { decompose, histBucketSql, type Segment } from "../rollups/buckets.ts";
import { CATEGORY_COLUMNS, COUNT_AGGREGATES_SQL, FACT_COLUMNS, sendsOf } from "../rollups/record-facts.ts";

/** A segment of the window attributed to a sparkline slice (−1: the previous period). */
export interface SliceSegment extends Segment {
  slice: number;
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
}

/** One histogram bucket of a tool (`k`: see `histBucketOf`), `n` may be negative in a correction row. */
export interface HistRow {
  tool: string;
  k: number;
  n: number;
}

/** Exact percentiles of a tool's raw sends (tool null: all tools). */
export interface ExactLatencyRow {
  tool: string | null;
  samples: number;
  p50: number | null;
  p95: number | null;
  p99: number | null;
}

const COUNT_COLUMNS = ["calls", "unknown", ...CATEGORY_COLUMNS.map(([, c]) => c)];
const ts = (ms: string) => `(TIMESTAMPTZ 'epoch' + (${ms}) * interval '1 millisecond')`;

function segmentsCte(segments: SliceSegment[]): Prisma.Sql {
  return Prisma.sql`seg AS (
    SELECT * FROM unnest(${segments.map((s) => s.slice)}::int[], ${segments.map((s) => s.levelMs)}::int[],
      ${segments.map((s) => s.fromMs)}::float8[], ${segments.map((s) => s.toMs)}::float8[]) AS s(slice, lvl, lo, hi)
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

/** Dirty minutes inside rollup segments (once each), and their records. */
function dirtyCtes(tenants: string[]): Prisma.Sql {
  const minuteWhere = (table: string) => `SELECT ${FACT_COLUMNS} FROM ${table} r
      WHERE r.tenant = d.tenant AND r.tool = d.tool AND r.created_at >= d.minute AND r.created_at < d.minute + interval '1 minute'`;
  return Prisma.sql`dirty AS (
    SELECT DISTINCT s.slice, d.tenant, d.tool, d.minute FROM seg s
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

/** Rollup rows (`u`, with `slice`) of the rollup segments, of the tenants. */
function rollupRows(tenants: string[]): Prisma.Sql {
  return Prisma.sql`SELECT s.slice, u.* FROM seg s JOIN intent_rollups u ON u.tenant = ANY(${tenants}::text[])
      AND u.bucket_ms = s.lvl AND u.bucket_start >= ${Prisma.raw(ts("s.lo"))} AND u.bucket_start < ${Prisma.raw(ts("s.hi"))}
    WHERE s.lvl > 0`;
}

/** Counts per (slice, tool): rollups + raw − dirty rollup rows + dirty minutes' records. */
export function countsSql(tenants: string[], segments: SliceSegment[]): Prisma.Sql {
  const sums = COUNT_COLUMNS.map((c) => `sum(x.${c})::int AS ${c}`).join(", ");
  const rollupSums = (sign: string) => COUNT_COLUMNS.map((c) => `${sign}sum(u.${c}) AS ${c}`).join(", ");
  return Prisma.sql`
    WITH ${segmentsCte(segments)}, ${dirtyCtes(tenants)}
    SELECT x.slice, x.tool, ${Prisma.raw(sums)} FROM (
      SELECT u.slice, u.tool, ${Prisma.raw(rollupSums(""))} FROM (${rollupRows(tenants)}) u GROUP BY 1, 2
      UNION ALL
      SELECT r.slice, r.tool, ${Prisma.raw(COUNT_AGGREGATES_SQL)} FROM (${rawRecords(tenants)}) r GROUP BY 1, 2
      UNION ALL
      SELECT u.slice, u.tool, ${Prisma.raw(rollupSums("-"))} FROM dirty_rollups u GROUP BY 1, 2
      UNION ALL
      SELECT r.slice, r.tool, ${Prisma.raw(COUNT_AGGREGATES_SQL)} FROM dirty_records r GROUP BY 1, 2
    ) x GROUP BY 1, 2`;
}

/** Latency histogram per tool over the window's slices (slice ≥ 0), with the same corrections. */
export function histogramSql(tenants: string[], segments: SliceSegment[]): Prisma.Sql {
  const window = segments.filter((s) => s.slice >= 0);
  const k = Prisma.raw(histBucketSql("r.duration_ms"));
  return Prisma.sql`
    WITH ${segmentsCte(window)}, ${dirtyCtes(tenants)}
    SELECT x.tool, x.k, sum(x.n)::int AS n FROM (
      SELECT u.tool, kv.key::int AS k, sum(kv.value::int) AS n
      FROM (${rollupRows(tenants)}) u, jsonb_each_text(u.latency_hist) kv GROUP BY 1, 2
      UNION ALL
      SELECT u.tool, kv.key::int AS k, -sum(kv.value::int) AS n
      FROM dirty_rollups u, jsonb_each_text(u.latency_hist) kv GROUP BY 1, 2
      UNION ALL
      SELECT r.tool, ${k} AS k, count(*) AS n FROM (${sendsOf(Prisma.sql`${rawRecords(tenants)} UNION ALL SELECT * FROM dirty_records`)}) r
      GROUP BY 1, 2
    ) x GROUP BY 1, 2 HAVING sum(x.n) <> 0`;
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

/** Stale PENDING per tool (deadline before `nowMs`, whatever the window): on the live-deadline partial index. */
export function staleSql(tenants: string[], nowMs: number): Prisma.Sql {
  return Prisma.sql`
    SELECT tool, count(*)::int AS n, min(deadline_at) AS oldest FROM intent_records
    WHERE tenant = ANY(${tenants}::text[]) AND status IN ('PENDING', 'UNKNOWN') AND status = 'PENDING'
      AND deadline_at < ${new Date(nowMs)}::timestamptz
    GROUP BY tool`;
}

/**
 * Compensations (and correctives) run for effects created in [fromMs, toMs), per tool: on the
 * compensated partial index. A failed one ended FAILED_NO_EFFECT, waits for a person, or never got a
 * record; one still being reconciled is not counted as failed.
 */
export function compensationsSql(tenants: string[], fromMs: number, toMs: number): Prisma.Sql {
  return Prisma.sql`
    SELECT r.tool, count(*)::int AS run,
      count(*) FILTER (WHERE c.key IS NULL OR c.status = 'FAILED_NO_EFFECT' OR c.needs_human)::int AS failed
    FROM intent_records r
    LEFT JOIN intent_records c ON c.tenant = r.tenant AND c.key = r.compensation->>'key'
    WHERE r.tenant = ANY(${tenants}::text[]) AND r.compensation ? 'key'
      AND r.created_at >= ${new Date(fromMs)}::timestamptz AND r.created_at < ${new Date(toMs)}::timestamptz
    GROUP BY r.tool`;
}

/** The rollups' watermark, epoch ms (0: never refreshed). */
export const WATERMARK_SQL = Prisma.sql`
  SELECT coalesce((SELECT extract(epoch FROM refreshed_to) * 1000 FROM intent_rollup_state WHERE id = 1), 0)::float8 AS ms`;

/**
 * The window's slices (and the previous period, slice −1) cut at the sealed horizon: before it, whole
 * rollup buckets and raw edges under a minute ({@link decompose}); after it, raw rows.
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
    for (const seg of decompose(a, cut)) out.push({ slice, ...seg });
    if (cut < b) out.push({ slice, levelMs: 0, fromMs: cut, toMs: b });
  }
  return out;
}

/** The whole window (slice 0) cut at the sealed horizon: the latency histogram needs no slices. */
export function windowSegments(fromEpochMs: number, toEpochMs: number, sealedMs: number): SliceSegment[] {
  const cut = Math.max(fromEpochMs, Math.min(toEpochMs, sealedMs));
  const out: SliceSegment[] = decompose(fromEpochMs, cut).map((seg) => ({ slice: 0, ...seg }));
  if (cut < toEpochMs) out.push({ slice: 0, levelMs: 0, fromMs: cut, toMs: toEpochMs });
  return out;
}
