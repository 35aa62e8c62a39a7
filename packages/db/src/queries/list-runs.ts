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
 * after the window. Bounded by the window: the runs are found by a range scan of
 * `(tenant, tool, created_at)` per tool (the distinct tools by a skip scan of the same index), then
 * each run's records are read by `(tenant, run_id, …)`. Measured: 600,000 records over 30 days in 3
 * tenants, a page of one tenant's last 24 h (~4,000 runs) in ~60 ms on a warm cache.
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

/** The query of {@link listRuns}: candidates in the window, their summaries, the status, one page. */
function runsSql(
  q: z.output<typeof listRunsInput>,
  tenant: string | undefined,
  from: number,
  upper: number,
  after: Cursor | undefined,
): Prisma.Sql {
  // The next (tenant, tool) after t's: a plain seek on `tool` within one tenant (a row comparison
  // beside `tenant = …` would not start the index scan there), a row comparison across tenants.
  const tenantIs = tenant !== undefined ? Prisma.sql`tenant = ${tenant}` : Prisma.sql`TRUE`;
  const nextTool =
    tenant !== undefined
      ? Prisma.sql`tenant = ${tenant} AND tool > t.tool`
      : Prisma.sql`(tenant, tool) > (t.tenant, t.tool)`;
  const keyset = after
    ? Prisma.sql`AND (min(i.created_at), c.tenant, c.run_id) < (${new Date(after.startedAt)}::timestamptz, ${after.tenant}, ${after.runId})`
    : Prisma.empty;
  const withTool = q.tool !== undefined ? Prisma.sql`AND bool_or(i.tool = ${q.tool})` : Prisma.empty;
  const statusIs = q.status !== undefined ? Prisma.sql`WHERE s.status = ${q.status}` : Prisma.empty;
  return Prisma.sql`
    WITH RECURSIVE tools AS (
      (SELECT tenant, tool FROM intent_records WHERE ${tenantIs} ORDER BY tenant, tool LIMIT 1)
      UNION ALL
      SELECT n.tenant, n.tool FROM tools t CROSS JOIN LATERAL (
        SELECT tenant, tool FROM intent_records
        WHERE ${nextTool} ORDER BY tenant, tool LIMIT 1
      ) n
    ),
    candidates AS (
      SELECT DISTINCT r.tenant, r.run_id FROM tools t CROSS JOIN LATERAL (
        SELECT tenant, run_id FROM intent_records
        WHERE tenant = t.tenant AND tool = t.tool
          AND created_at >= ${new Date(from)}::timestamptz AND created_at < ${new Date(upper)}::timestamptz
        OFFSET 0 -- keeps the lateral a range scan of (tenant, tool, created_at) per tool
      ) r
    ),
    runs AS (
      SELECT c.tenant, c.run_id,
        min(i.created_at) AS started_at,
        max(i.updated_at) AS last_activity,
        max(coalesce(i.finished_at, i.updated_at)) AS last_end,
        array_agg(DISTINCT i.tool ORDER BY i.tool) AS tools,
        count(*)::int AS steps,
        count(*) FILTER (WHERE i.needs_human)::int AS needs_human_count,
        bool_or(i.status = 'UNKNOWN' OR i.needs_human) AS attention,
        bool_or(i.status = 'PENDING') AS pending,
        bool_or(i.step_id LIKE 'compensate:%' OR i.step_id LIKE 'correct:%') AS compensated
      FROM candidates c JOIN intent_records i ON i.tenant = c.tenant AND i.run_id = c.run_id
      GROUP BY c.tenant, c.run_id
      HAVING min(i.created_at) >= ${new Date(from)}::timestamptz ${keyset} ${withTool}
    ),
    statuses AS (
      SELECT r.*, CASE
        WHEN r.attention THEN 'needs_attention'
        WHEN r.pending THEN 'open'
        WHEN r.compensated OR EXISTS (
          SELECT 1 FROM audit_entries a
          WHERE a.tenant = r.tenant AND a.key = ${RUN_AUDIT_KEY_PREFIX}::text || r.run_id AND a.action = ${RUN_ABORT_ACTION}
        ) THEN 'aborted'
        WHEN EXISTS (
          SELECT 1 FROM run_plans p CROSS JOIN LATERAL jsonb_array_elements(p.steps) step
          WHERE p.tenant = r.tenant AND p.run_id = r.run_id AND NOT EXISTS (
            SELECT 1 FROM intent_records d
            WHERE d.tenant = r.tenant AND d.run_id = r.run_id
              AND d.step_id = step->>'stepId' AND d.tool = step->>'tool'
              AND d.status IN ('SUCCEEDED', 'FAILED_NO_EFFECT')
          )
        ) THEN 'open'
        ELSE 'completed'
      END AS status
      FROM runs r
    ),
    page AS (
      SELECT * FROM statuses s ${statusIs}
      ORDER BY s.started_at DESC, s.tenant DESC, s.run_id DESC
      LIMIT ${q.limit + 1}
    )
    SELECT p.tenant, p.run_id, p.status, p.started_at, p.last_activity, p.last_end, p.tools, p.steps,
      p.needs_human_count,
      (SELECT count(*)::int FROM intent_records u
        WHERE u.tenant = p.tenant AND u.run_id = p.run_id AND (
          u.status = 'UNKNOWN' OR u.resolution IS NOT NULL OR EXISTS (
            SELECT 1 FROM intent_events e WHERE e.tenant = u.tenant AND e.key = u.key
              AND (e.type = 'lease_expired' OR (e.type = 'outcome' AND e.data->>'outcome' = 'UNKNOWN'))
          )
        )) AS unknown_count
    FROM page p
    ORDER BY p.started_at DESC, p.tenant DESC, p.run_id DESC`;
}
