import { z } from "zod";
import { Prisma, type PrismaClient } from "../generated/prisma/client.ts";
import type { TenantScope } from "./intent-view.ts";
import { epochMsSchema, parseQueryInput, QueryInputError } from "./query-input.ts";

/**
 * A run's state, derived from its intent records, its declared plan (`run_plans`) and its operator
 * aborts (`audit_entries`), checked in this order:
 * - `needs_attention`: a record of the run is UNKNOWN (the sweeper's or a person's to settle) or is
 *   in the human queue (`needs_human`, which an abort also sets on a confirmed effect it cannot undo).
 * - `open`: otherwise, a record is PENDING (a call in flight).
 * - `aborted`: otherwise, the run has a compensating or corrective step (`compensate:…` / `correct:…`,
 *   written by `runs.abort`, `runs.operatorAbort` or an operator's `compensate`), or an operator
 *   aborted it (an `abort_run` audit entry) — even when it had nothing to undo.
 * - `open`: otherwise, its declared plan has a step with no settled record (SUCCEEDED or
 *   FAILED_NO_EFFECT) of that step and tool: the agent has not finished it.
 * - `completed`: otherwise (every record settled, every planned step done). An agent that never
 *   declared a plan and made no call in flight counts as completed between its calls.
 */
export type RunStatus = "open" | "completed" | "aborted" | "needs_attention";

/** Every {@link RunStatus}. */
export const RUN_STATUSES = ["open", "completed", "aborted", "needs_attention"] as const;

/** Page size of {@link listRuns} when none is given. */
export const DEFAULT_RUNS_LIMIT = 50;
/** Largest page of {@link listRuns}. */
export const MAX_RUNS_LIMIT = 200;
/** The window when none is given: the last 24 h, ms. */
export const DEFAULT_RUNS_WINDOW_MS = 24 * 3_600_000;
/** The widest window {@link listRuns} reads (31 days, ms): the query scans the window's records. */
export const MAX_RUNS_WINDOW_MS = 31 * 24 * 3_600_000;
/** The audit action of an operator's run abort (`audit_entries.action`). */
export const RUN_ABORT_ACTION = "abort_run";
/** `audit_entries.key` of a run-level entry: this prefix and the run id (never a record key: those are hex). */
export const RUN_AUDIT_KEY_PREFIX = "run:";

/** One run of {@link listRuns}. Times are epoch ms, durations ms. */
export interface RunSummary {
  runId: string;
  tenant: string;
  status: RunStatus;
  /** Creation of the run's first record. */
  startedAtEpochMs: number;
  /** The latest update of any of its records. */
  lastActivityEpochMs: number;
  /** From the start to the end of the last record (its finish, or its last update while unsettled). */
  durationMs: number;
  /** Distinct tools of its records (compensations included), sorted. */
  tools: string[];
  /** Its records: one per step and tool, compensating and corrective steps included. */
  steps: number;
  /**
   * Records that are UNKNOWN or ever were: status UNKNOWN, a resolution (only an UNKNOWN gets one),
   * or a timeline event saying so (an `outcome` event with outcome UNKNOWN, a `lease_expired`), which
   * covers an UNKNOWN settled by a late answer or a key probe without a resolution.
   */
  unknownCount: number;
  /** Records in the human queue now. */
  needsHumanCount: number;
}

const text = z.string().min(1, "must not be empty").max(200, "must be at most 200 characters");

/** Input of {@link listRuns}. */
export const listRunsInput = z
  .object({
    /** Runs that started at or after, epoch ms. @default toEpochMs − 24 h */
    fromEpochMs: epochMsSchema.optional(),
    /** Runs that started before, epoch ms. @default now */
    toEpochMs: epochMsSchema.optional(),
    status: z.enum(RUN_STATUSES).optional(),
    /** Runs with at least one record of this tool. */
    tool: text.optional(),
    /** `nextCursor` of the previous page (opaque). */
    cursor: z.string().min(1).max(500).optional(),
    /** Page size, 1–200. @default 50 */
    limit: z.number().int().min(1).max(MAX_RUNS_LIMIT).default(DEFAULT_RUNS_LIMIT),
  })
  .strict();

/** One page of {@link listRuns}. */
export interface RunPage {
  /** Newest start first (then tenant, run id, descending). */
  items: RunSummary[];
  /** Cursor of the next page, or null on the last page. */
  nextCursor: string | null;
  /** The window read, epoch ms (the defaults filled in). */
  fromEpochMs: number;
  toEpochMs: number;
}

interface Cursor {
  startedAt: number;
  tenant: string;
  runId: string;
}

function encodeCursor(run: RunSummary): string {
  return Buffer.from(JSON.stringify([run.startedAtEpochMs, run.tenant, run.runId]), "utf8").toString("base64url");
}

function decodeCursor(cursor: string): Cursor {
  try {
    const v: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (
      Array.isArray(v) &&
      v.length === 3 &&
      Number.isSafeInteger(v[0]) &&
      (v[0] as number) >= 0 &&
      typeof v[1] === "string" &&
      typeof v[2] === "string"
    ) {
      return { startedAt: v[0] as number, tenant: v[1], runId: v[2] };
    }
  } catch {
    // fall through
  }
  throw new QueryInputError("cursor", "is not a cursor returned by this list");
}

interface RunRow {
  tenant: string;
  run_id: string;
  status: RunStatus;
  started_at: Date;
  last_activity: Date;
  last_end: Date;
  tools: string[];
  steps: number;
  unknown_count: number;
  needs_human_count: number;
}

/**
 * Agent runs (a run: a tenant's records with one run id) that started in `[fromEpochMs, toEpochMs)`,
 * newest start first, by pages: keyset pagination on (start, tenant, run id), so runs and records
 * written while paging never shift a page (a run's start is its first record's creation, which
 * later records do not change). Each run is summarised over all its records, also those created
 * after the window and those retention moved to `intent_records_archive` (settled records: their
 * timelines are read from `intent_events_archive`). Bounded by the window: the runs are found by a
 * range scan of `(tenant, tool, created_at)` per tool (the distinct tools by a skip scan of the same
 * index) and of the archive's `(tenant, created_at)`, ordered by start, and only the runs of the
 * page are then read whole, by `(tenant, run_id, …)` in both tables. Measured: 600,000 records over
 * 30 days in 3 tenants, a page of one tenant's last 24 h (~4,000 runs) in ~65 ms.
 * @param options.tenant - only this tenant's runs ({@link TenantScope}).
 * @param options.nowEpochMs - "now" for the default window. @default Date.now()
 * @throws QueryInputError naming the field: a window that is empty, reversed or wider than 31 days
 *   (`toEpochMs`), a bad status, tool or limit, a forged `cursor`.
 */
export async function listRuns(
  prisma: PrismaClient,
  input: z.input<typeof listRunsInput> = {},
  options: TenantScope & { nowEpochMs?: number } = {},
): Promise<RunPage> {
  const q = parseQueryInput(listRunsInput, input);
  const to = q.toEpochMs ?? options.nowEpochMs ?? Date.now();
  const from = q.fromEpochMs ?? Math.max(0, to - DEFAULT_RUNS_WINDOW_MS);
  if (from >= to) throw new QueryInputError("toEpochMs", "must be after fromEpochMs");
  if (to - from > MAX_RUNS_WINDOW_MS) throw new QueryInputError("toEpochMs", "the window may span at most 31 days");
  const after = q.cursor !== undefined ? decodeCursor(q.cursor) : undefined;
  // Runs after the cursor started no later than it: their first record is older than cursor + 1 ms.
  const upper = after ? Math.min(to, after.startedAt + 1) : to;
  const rows = await prisma.$queryRaw<RunRow[]>(runsSql(q, options.tenant, from, upper, after));
  const items = rows.slice(0, q.limit).map(toRunSummary);
  const last = items.at(-1);
  return {
    items,
    nextCursor: rows.length > q.limit && last ? encodeCursor(last) : null,
    fromEpochMs: from,
    toEpochMs: to,
  };
}

function toRunSummary(row: RunRow): RunSummary {
  const started = row.started_at.getTime();
  return {
    runId: row.run_id,
    tenant: row.tenant,
    status: row.status,
    startedAtEpochMs: started,
    lastActivityEpochMs: row.last_activity.getTime(),
    durationMs: Math.max(0, row.last_end.getTime() - started),
    tools: row.tools,
    steps: row.steps,
    unknownCount: row.unknown_count,
    needsHumanCount: row.needs_human_count,
  };
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
 * The query of {@link listRuns}: candidates in the window (both tables), their summaries over all
 * their records, the status, one page, and the UNKNOWN counts of that page only.
 */
function runsSql(
  q: z.output<typeof listRunsInput>,
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
  const withTool = q.tool !== undefined ? Prisma.sql`bool_or(i.tool = ${q.tool})` : Prisma.sql`TRUE`;
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
      ) w
      GROUP BY w.tenant, w.run_id
    ),
    -- Newest start first; each run summarised over all its records only as the page needs it (the
    -- ordered subquery feeds a nested loop that the LIMIT stops).
    page AS (
      SELECT c.tenant, c.run_id, c.started_at, a.last_activity, a.last_end, a.tools, a.steps,
        a.needs_human_count, s.status
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
          ) THEN 'aborted'
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
      WHERE a.first_at >= ${fromAt} AND a.has_tool ${statusIs}
      ORDER BY c.started_at DESC, c.tenant DESC, c.run_id DESC
      LIMIT ${q.limit + 1}
    )
    SELECT p.tenant, p.run_id, p.status, p.started_at, p.last_activity, p.last_end, p.tools, p.steps,
      p.needs_human_count,
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
