import { Prisma } from "../generated/prisma/client.ts";
import { toolFilterPattern } from "./tool-match.ts";

/** The audit action of an operator's run abort (`audit_entries.action`). */
export const RUN_ABORT_ACTION = "abort_run";
/** `audit_entries.key` of a run-level entry: this prefix and the run id (never a record key: those are hex). */
export const RUN_AUDIT_KEY_PREFIX = "run:";

/** A keyset position of `listRuns`: the last run of the previous page. */
export interface Cursor {
  startedAt: number;
  tenant: string;
  runId: string;
}

/** What the runs query needs of `listRuns`' parsed input. */
export interface RunsQuery {
  /** Tool filter: a case-insensitive substring of a tool name. */
  tool?: string | undefined;
  status?: string | undefined;
  limit: number;
}

/** The records of run `r` (a row with `tenant`, `run_id`) in both tables (a record is in one at any snapshot). */
function runRecords(r: string): Prisma.Sql {
  const cols = Prisma.raw(
    "tenant, key, run_id, step_id, tool, status, resolution, needs_human, created_at, updated_at, finished_at",
  );
  const t = Prisma.raw(r);
  return Prisma.sql`(
    SELECT ${cols}, FALSE AS archived FROM intent_records WHERE tenant = ${t}.tenant AND run_id = ${t}.run_id
    UNION ALL
    SELECT ${cols}, TRUE AS archived FROM intent_records_archive WHERE tenant = ${t}.tenant AND run_id = ${t}.run_id
  )`;
}

/**
 * The query of `listRuns`: candidates in the window (both tables), their summaries over all
 * their records, the status, one page, and the UNKNOWN counts of that page only.
 */
export function runsSql(
  q: RunsQuery,
  tenant: string | undefined,
  from: number,
  upper: number,
  after: Cursor | undefined,
): Prisma.Sql {
  const fromAt = Prisma.sql`${new Date(from)}::timestamptz`;
  const upperAt = Prisma.sql`${new Date(upper)}::timestamptz`;
  // The next (tenant, tool) after t's: a plain seek on `tool` within one tenant (a row comparison
  // beside `tenant = …` would not start the index scan there), a row comparison across tenants.
  const tenantIs = tenant !== undefined ? Prisma.sql`tenant = ${tenant}` : Prisma.sql`TRUE`;
  const nextTool =
    tenant !== undefined
      ? Prisma.sql`tenant = ${tenant} AND tool > t.tool`
      : Prisma.sql`(tenant, tool) > (t.tenant, t.tool)`;
  // Archived (settled, old) records: by (tenant, created_at) per tenant; tenants by a skip scan of the key.
  const archiveTenants =
    tenant !== undefined
      ? Prisma.sql`SELECT ${tenant}::text AS tenant`
      : Prisma.sql`SELECT tenant FROM archive_tenants WHERE tenant IS NOT NULL`;
  const keyset = after
    ? Prisma.sql`AND (c.started_at, c.tenant, c.run_id) < (${new Date(after.startedAt)}::timestamptz, ${after.tenant}, ${after.runId})`
    : Prisma.empty;
  const withTool =
    q.tool !== undefined ? Prisma.sql`bool_or(i.tool ILIKE ${toolFilterPattern(q.tool)})` : Prisma.sql`TRUE`;
  const planTenantIs = tenant !== undefined ? Prisma.sql`p.tenant = ${tenant}` : Prisma.sql`TRUE`;
  const statusIs = q.status !== undefined ? Prisma.sql`AND s.status = ${q.status}` : Prisma.empty;
  return Prisma.sql`
    WITH RECURSIVE tools AS (
      (SELECT tenant, tool FROM intent_records WHERE ${tenantIs} ORDER BY tenant, tool LIMIT 1)
      UNION ALL
      SELECT n.tenant, n.tool FROM tools t CROSS JOIN LATERAL (
        SELECT tenant, tool FROM intent_records WHERE ${nextTool} ORDER BY tenant, tool LIMIT 1
      ) n
    ),
    archive_tenants AS (
      (SELECT tenant FROM intent_records_archive ORDER BY tenant LIMIT 1)
      UNION ALL
      SELECT (SELECT n.tenant FROM intent_records_archive n WHERE n.tenant > a.tenant ORDER BY n.tenant LIMIT 1)
      FROM archive_tenants a WHERE a.tenant IS NOT NULL
    ),
    -- Runs with a record in [from, upper), and their first such record: a run's start when it has
    -- none before the window (checked below); the runs that have one are not listed.
    candidates AS (
      SELECT w.tenant, w.run_id, min(w.created_at) AS started_at FROM (
        SELECT r.tenant, r.run_id, r.created_at FROM tools t CROSS JOIN LATERAL (
          SELECT tenant, run_id, created_at FROM intent_records
          WHERE tenant = t.tenant AND tool = t.tool AND created_at >= ${fromAt} AND created_at < ${upperAt}
          OFFSET 0 -- keeps the lateral a range scan of (tenant, tool, created_at) per tool
        ) r
        UNION ALL
        SELECT r.tenant, r.run_id, r.created_at FROM (${archiveTenants}) t CROSS JOIN LATERAL (
          SELECT tenant, run_id, created_at FROM intent_records_archive
          WHERE tenant = t.tenant AND created_at >= ${fromAt} AND created_at < ${upperAt}
          OFFSET 0
        ) r
        UNION ALL
        -- Runs with a declared plan and no record yet: they start when the plan was declared.
        SELECT p.tenant, p.run_id, p.updated_at AS created_at FROM run_plans p
        WHERE ${planTenantIs} AND p.updated_at >= ${fromAt} AND p.updated_at < ${upperAt}
          AND NOT EXISTS (SELECT 1 FROM intent_records r WHERE r.tenant = p.tenant AND r.run_id = p.run_id)
          AND NOT EXISTS (SELECT 1 FROM intent_records_archive r WHERE r.tenant = p.tenant AND r.run_id = p.run_id)
      ) w
      GROUP BY w.tenant, w.run_id
    ),
    -- Newest start first; each run summarised over all its records only as the page needs it (the
    -- ordered subquery feeds a nested loop that the LIMIT stops).
    page AS (
      SELECT c.tenant, c.run_id, c.started_at, a.last_activity, a.last_end, a.tools, a.steps,
        a.needs_human_count, a.unresolved_unknown_count, s.status
      FROM (
        SELECT * FROM candidates c WHERE TRUE ${keyset}
        ORDER BY c.started_at DESC, c.tenant DESC, c.run_id DESC
        OFFSET 0
      ) c
      CROSS JOIN LATERAL (
        SELECT min(i.created_at) AS first_at,
          max(i.updated_at) AS last_activity,
          max(coalesce(i.finished_at, i.updated_at)) AS last_end,
          array_agg(DISTINCT i.tool ORDER BY i.tool) AS tools,
          count(*)::int AS steps,
          count(*) FILTER (WHERE i.needs_human)::int AS needs_human_count,
          count(*) FILTER (WHERE i.status = 'UNKNOWN')::int AS unresolved_unknown_count,
          bool_or(i.status = 'UNKNOWN' OR i.needs_human) AS attention,
          bool_or(i.status = 'PENDING') AS pending,
          bool_or(i.step_id LIKE 'compensate:%' OR i.step_id LIKE 'correct:%') AS compensated,
          ${withTool} AS has_tool
        FROM ${runRecords("c")} i
      ) a
      CROSS JOIN LATERAL (
        SELECT CASE
          WHEN a.attention THEN 'needs_attention'
          WHEN a.pending THEN 'open'
          WHEN a.compensated OR EXISTS (
            SELECT 1 FROM audit_entries ae
            WHERE ae.tenant = c.tenant AND ae.key = ${RUN_AUDIT_KEY_PREFIX}::text || c.run_id
              AND ae.action = ${RUN_ABORT_ACTION}
          ) OR EXISTS (SELECT 1 FROM run_aborts ra WHERE ra.tenant = c.tenant AND ra.run_id = c.run_id) THEN 'aborted'
          WHEN EXISTS (
            SELECT 1 FROM run_plans p CROSS JOIN LATERAL jsonb_array_elements(p.steps) step
            WHERE p.tenant = c.tenant AND p.run_id = c.run_id AND NOT EXISTS (
              SELECT 1 FROM ${runRecords("c")} d
              WHERE d.step_id = step->>'stepId' AND d.tool = step->>'tool'
                AND d.status IN ('SUCCEEDED', 'FAILED_NO_EFFECT')
            )
          ) THEN 'open'
          ELSE 'completed'
        END AS status
      ) s
      WHERE (a.first_at >= ${fromAt} OR a.first_at IS NULL) AND a.has_tool ${statusIs}
      ORDER BY c.started_at DESC, c.tenant DESC, c.run_id DESC
      LIMIT ${q.limit + 1}
    )
    SELECT p.tenant, p.run_id, p.status, p.started_at, p.last_activity, p.last_end, p.tools, p.steps,
      p.needs_human_count, p.unresolved_unknown_count,
      (SELECT ra.aborted_at FROM run_aborts ra WHERE ra.tenant = p.tenant AND ra.run_id = p.run_id) AS aborted_at,
      (SELECT count(*)::int FROM ${runRecords("p")} u
        WHERE u.status = 'UNKNOWN' OR u.resolution IS NOT NULL OR EXISTS (
          SELECT 1 FROM intent_events e WHERE NOT u.archived AND e.tenant = u.tenant AND e.key = u.key
            AND (e.type = 'lease_expired' OR (e.type = 'outcome' AND e.data->>'outcome' = 'UNKNOWN'))
        ) OR EXISTS (
          SELECT 1 FROM intent_events_archive e WHERE u.archived AND e.tenant = u.tenant AND e.key = u.key
            AND (e.type = 'lease_expired' OR (e.type = 'outcome' AND e.data->>'outcome' = 'UNKNOWN'))
        )) AS unknown_count
    FROM page p
    ORDER BY p.started_at DESC, p.tenant DESC, p.run_id DESC`;
}
