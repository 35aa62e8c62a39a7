/**
 * SQL fragments shared by the rollup refresh and the overview's raw ranges, so both count a record the
 * same way. Every fragment reads a relation aliased `r` with the columns of `intent_records`.
 */
import { Prisma } from "../generated/prisma/client.ts";

/** The categories of an UNKNOWN's ending, as the rollups' count columns name them. */
export const CATEGORY_COLUMNS = [
  ["found", "found"],
  ["absent_resent", "absent_resent"],
  ["human_confirmed_effect", "human_confirmed_effect"],
  ["human_confirmed_no_effect", "human_confirmed_no_effect"],
  ["human_resent", "human_resent"],
  ["open", "open"],
  ["other", "other"],
] as const;

/**
 * How a record's UNKNOWN ended: `open` (PENDING or UNKNOWN again, or waiting for a person), its
 * resolution, or `other` (settled without one, e.g. a refused resend).
 */
export const CATEGORY_SQL = `CASE
  WHEN r.status IN ('PENDING', 'UNKNOWN') OR r.resolution = 'needs_human' THEN 'open'
  WHEN r.resolution IS NOT NULL THEN r.resolution::text
  ELSE 'other' END`;

/** The columns a fact row needs (projection of `r`). */
export const FACT_COLUMNS = "r.tenant, r.key, r.tool, r.created_at, r.ever_unknown, r.status, r.resolution";

/**
 * Aggregates over fact rows `r` (grouped by the caller): calls, unknown and the seven categories
 * (of the ever-UNKNOWN records), as int columns named like the rollups'.
 */
export const COUNT_AGGREGATES_SQL = [
  "count(*)::int AS calls",
  "count(*) FILTER (WHERE r.ever_unknown)::int AS unknown",
  ...CATEGORY_COLUMNS.map(
    ([category, column]) =>
      `count(*) FILTER (WHERE r.ever_unknown AND ${CATEGORY_SQL} = '${category}')::int AS ${column}`,
  ),
].join(",\n  ");

/** The sum of every count column of `intent_rollups` rows aliased `u`, times `sign` (1 or −1). */
export function sumRollupCountsSql(sign: 1 | -1): string {
  return ["calls", "unknown", ...CATEGORY_COLUMNS.map(([, c]) => c), "latency_samples"]
    .map((c) => `(${sign} * sum(u.${c}))::int AS ${c}`)
    .join(", ");
}

/**
 * The outcome events with a duration of the records `r` (hot and archived timelines): rows
 * (r.* of the caller, `duration_ms` float8). Probes the timelines' (tenant, key, id) index per record (LATERAL: a hash
 * join would read every outcome event of the table for a few minutes of records).
 */
export function sendsOf(records: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    SELECT r.tenant, r.tool, r.created_at, (e.data->>'durationMs')::float8 AS duration_ms
    FROM (${records}) r
    CROSS JOIN LATERAL (
      SELECT data FROM intent_events e WHERE e.tenant = r.tenant AND e.key = r.key AND e.type = 'outcome'
      UNION ALL
      SELECT data FROM intent_events_archive e WHERE e.tenant = r.tenant AND e.key = r.key AND e.type = 'outcome'
    ) e
    WHERE jsonb_typeof(e.data->'durationMs') = 'number'`;
}
