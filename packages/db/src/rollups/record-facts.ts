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
 * How a record's UNKNOWN ended: `open` (PENDING or UNKNOWN again, or waiting for a person — the human
 * queue's own field, so a settled record waiting for a correction is open too), its resolution, or
 * `other` (settled without one, e.g. a refused resend).
 */
export const CATEGORY_SQL = `CASE
  WHEN r.status IN ('PENDING', 'UNKNOWN') OR r.needs_human THEN 'open'
  WHEN r.resolution IS NOT NULL THEN r.resolution::text
  ELSE 'other' END`;

/**
 * A compensated record's compensation failed: the record its `compensation.key` names (hot or archived)
 * ended FAILED_NO_EFFECT, waits for a person, or does not exist. One still being reconciled (PENDING,
 * UNKNOWN) has not failed. Probes the primary keys of both tables, only for a compensated record.
 */
export const COMPENSATION_FAILED_SQL = `CASE WHEN r.compensation ? 'key' THEN NOT EXISTS (
    SELECT 1 FROM intent_records c WHERE c.tenant = r.tenant AND c.key = r.compensation->>'key'
      AND c.status <> 'FAILED_NO_EFFECT' AND NOT c.needs_human
    UNION ALL
    SELECT 1 FROM intent_records_archive c WHERE c.tenant = r.tenant AND c.key = r.compensation->>'key'
      AND c.status <> 'FAILED_NO_EFFECT' AND NOT c.needs_human)
  ELSE false END`;

/**
 * The columns a fact row needs (projection of `r`, the hot or the archive table): the record's own
 * columns, `archived` (read from the archive table), `compensated` (a compensation or corrective ran:
 * `compensation.key` is set) and `compensation_failed` ({@link COMPENSATION_FAILED_SQL}).
 */
export const FACT_COLUMNS = `r.tenant, r.key, r.tool, r.created_at, r.ever_unknown, r.status, r.resolution, r.needs_human,
  (r.tableoid = 'intent_records_archive'::regclass) AS archived,
  (r.compensation ? 'key') AS compensated, ${COMPENSATION_FAILED_SQL} AS compensation_failed`;

/**
 * The count columns of `intent_rollups`, as {@link COUNT_AGGREGATES_SQL} names them: calls, ever
 * UNKNOWN, the seven categories of the UNKNOWNs' endings, compensations run and failed.
 */
export const COUNT_COLUMNS = [
  "calls",
  "unknown",
  ...CATEGORY_COLUMNS.map(([, c]) => c),
  "compensations_run",
  "compensations_failed",
] as const;

/**
 * Aggregates over fact rows `r` (grouped by the caller): calls, unknown, the seven categories (of the
 * ever-UNKNOWN records) and the compensations run and failed, as int columns named like the rollups'
 * ({@link COUNT_COLUMNS}).
 */
export const COUNT_AGGREGATES_SQL = [
  "count(*)::int AS calls",
  "count(*) FILTER (WHERE r.ever_unknown)::int AS unknown",
  ...CATEGORY_COLUMNS.map(
    ([category, column]) =>
      `count(*) FILTER (WHERE r.ever_unknown AND ${CATEGORY_SQL} = '${category}')::int AS ${column}`,
  ),
  "count(*) FILTER (WHERE r.compensated)::int AS compensations_run",
  "count(*) FILTER (WHERE r.compensation_failed)::int AS compensations_failed",
].join(",\n  ");

/**
 * The outcome events with a duration of the records `r` (fact rows): rows (tenant, tool, created_at,
 * `duration_ms` float8). One probe of the timeline's (tenant, key, id) index per record, in the table
 * of the record's kind only: a record and its timeline are in the same kind of table at every snapshot
 * (events reference hot records; `archiveIntents` moves both in one statement). LATERAL: a hash join
 * would read every outcome event of the table for a few minutes of records.
 */
export function sendsOf(records: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    SELECT r.tenant, r.tool, r.created_at, (e.data->>'durationMs')::float8 AS duration_ms
    FROM (${records}) r
    CROSS JOIN LATERAL (
      SELECT data FROM intent_events e
      WHERE NOT r.archived AND e.tenant = r.tenant AND e.key = r.key AND e.type = 'outcome'
      UNION ALL
      SELECT data FROM intent_events_archive e
      WHERE r.archived AND e.tenant = r.tenant AND e.key = r.key AND e.type = 'outcome'
    ) e
    WHERE jsonb_typeof(e.data->'durationMs') = 'number'`;
}
