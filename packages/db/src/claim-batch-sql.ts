import { type IntentEvent, type IntentRecord, isCompensationStep, type NewIntentRecord } from "@tristate/core";
import { jsonParam, RECORD_COLUMNS, type RecordRow, timeParam } from "./intent-row.ts";
import type { Statement } from "./intent-sql.ts";

/** One claim of a batch: the tenant, the new record, its events (written only when it inserts), the caller's now. */
export interface BatchedClaim {
  tenant: string;
  record: NewIntentRecord;
  events: IntentEvent[];
  nowEpochMs: number;
}

const CLAIM_BATCH_TEXT = `WITH input AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(i int, tenant text, key text, run_id text, step_id text, tool text,
    args jsonb, identity jsonb, attempt int, lease_until_at float8, compensation jsonb, created_at float8, updated_at float8,
    trace_id text, exempt boolean)
), ins AS (
  INSERT INTO intent_records (tenant, key, run_id, step_id, tool, args, identity, status, attempt, lease_until_at,
    recheck_at, compensation, needs_human, reconcile_sweeps, version, created_at, updated_at, trace_id)
  SELECT tenant, key, run_id, step_id, tool, args, identity, 'PENDING', attempt,
    timestamptz 'epoch' + lease_until_at * interval '1 millisecond',
    timestamptz 'epoch' + lease_until_at * interval '1 millisecond', compensation, false, 0, 1,
    LEAST(timestamptz 'epoch' + created_at * interval '1 millisecond', now()),
    timestamptz 'epoch' + updated_at * interval '1 millisecond', trace_id
  FROM input
  WHERE (input.exempt OR NOT EXISTS (SELECT 1 FROM run_aborts a WHERE a.tenant = input.tenant AND a.run_id = input.run_id))
    AND NOT EXISTS (SELECT 1 FROM intent_records_archive a WHERE a.tenant = input.tenant
      AND (a.key = input.key OR (a.run_id = input.run_id AND a.step_id = input.step_id AND a.tool = input.tool)))
  ORDER BY i
  ON CONFLICT DO NOTHING
  RETURNING tenant, key, created_at
), ev AS (
  INSERT INTO intent_events (tenant, key, type, at, data)
  SELECT ins.tenant, ins.key, (x.e->>'type')::"IntentEventType",
    timestamptz 'epoch' + (x.e->>'at')::float8 * interval '1 millisecond', x.e->'data'
  FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS x(e, ord)
  JOIN ins ON ins.tenant = x.e->>'tenant' AND ins.key = x.e->>'key'
  ORDER BY x.ord
)
SELECT input.i, ins.created_at AS claimed_at, e.*
FROM input
LEFT JOIN ins ON ins.tenant = input.tenant AND ins.key = input.key
LEFT JOIN LATERAL (
  (SELECT false AS archived, ${RECORD_COLUMNS} FROM intent_records r
  WHERE ins.key IS NULL AND r.tenant = input.tenant
    AND (r.key = input.key OR (r.run_id = input.run_id AND r.step_id = input.step_id AND r.tool = input.tool))
  ORDER BY (r.key = input.key) DESC LIMIT 1)
  UNION ALL
  (SELECT true AS archived, ${RECORD_COLUMNS} FROM intent_records_archive r
  WHERE ins.key IS NULL AND r.tenant = input.tenant
    AND (r.key = input.key OR (r.run_id = input.run_id AND r.step_id = input.step_id AND r.tool = input.tool))
  ORDER BY (r.key = input.key) DESC LIMIT 1)
  LIMIT 1
) e ON true
WHERE ins.key IS NULL OR tristate_claim_unarchived(input.tenant, input.key, input.run_id, input.step_id, input.tool)
ORDER BY input.i`;

/**
 * A row of {@link claimBatchSql}: the claim's index, its insert time when it inserted, else the
 * existing record, the live table's or the archive's (`archived`); all null when none was visible.
 */
export type ClaimBatchRow = { i: number; claimed_at: Date | null } & (
  | (RecordRow & { archived: boolean })
  | { [K in keyof RecordRow | "archived"]: null }
);

/**
 * Several claims in one statement and one commit (group commit). Each claim inserts PENDING unless
 * its tenant already has its key or its (run, step, tool) (`ON CONFLICT DO NOTHING` covers both
 * unique constraints), with its events only when it inserted; nothing for a new step of an aborted
 * run (rule 13: all-null row, told apart by the store's second look). The claims of one batch must not
 * conflict with each other (same tenant and same key or same run/step/tool; see
 * {@link conflictsWithin}): then each inserted row belongs to exactly one claim and each loser's
 * winner is a row committed before (visible in the statement's snapshot, or not yet: all-null row,
 * read again). A claim whose step the archive holds inserts nothing and gets the archived record
 * (rule 15), as the single claim does (`claimSql`, with its guard against the archiver: a guard error
 * rolls the whole batch back, and each claim is made again). Rows: one per claim, in index order ({@link ClaimBatchRow}).
 * @throws RangeError for a non-finite time (before anything is sent).
 */
export function claimBatchSql(claims: readonly BatchedClaim[]): Statement {
  const input = claims.map(({ tenant, record, nowEpochMs }, i) => ({
    i,
    tenant,
    key: record.key,
    run_id: record.runId,
    step_id: record.stepId,
    tool: record.tool,
    args: record.args,
    identity: record.identity,
    attempt: record.attempt,
    lease_until_at: timeParam(record.leaseUntilEpochMs, "leaseUntilEpochMs").getTime(),
    compensation: record.compensation ?? null,
    created_at: timeParam(record.createdAtEpochMs, "createdAtEpochMs").getTime(),
    updated_at: timeParam(nowEpochMs, "nowEpochMs").getTime(),
    trace_id: record.traceId ?? null,
    // a compensation's step is claimed in an aborted run too (rule 13 refuses only new steps)
    exempt: isCompensationStep(record.stepId),
  }));
  const events = claims.flatMap(({ tenant, events }) =>
    events.map((e) => ({
      tenant,
      key: e.key,
      type: e.type,
      at: timeParam(e.atEpochMs, "event atEpochMs").getTime(),
      data: e.data,
    })),
  );
  return { name: "tristate_claim_batch_v4", text: CLAIM_BATCH_TEXT, values: [jsonParam(input), jsonParam(events)] };
}

/**
 * Whether two claims would compete for one record (same tenant, and the same key or the same
 * (run, step, tool)): such claims never share a batch, so a batch's rows map one-to-one to claims.
 */
export function conflictsWithin(a: BatchedClaim, b: BatchedClaim): boolean {
  if (a.tenant !== b.tenant) return false;
  const x = a.record;
  const y = b.record;
  return x.key === y.key || (x.runId === y.runId && x.stepId === y.stepId && x.tool === y.tool);
}

/**
 * The record a claim inserted, built from what it sent and what the database decided (the lean
 * claim: only `created_at` comes back). Mirrors the columns the insert writes.
 */
export function claimedRecord(claim: BatchedClaim, createdAt: Date): IntentRecord {
  const { record, tenant, nowEpochMs } = claim;
  return {
    tenant,
    key: record.key,
    runId: record.runId,
    stepId: record.stepId,
    tool: record.tool,
    args: record.args,
    identity: record.identity,
    status: "PENDING",
    attempt: record.attempt,
    leaseUntilEpochMs: record.leaseUntilEpochMs,
    // due for the sweeper when its lease ends
    recheckAtEpochMs: record.leaseUntilEpochMs,
    result: undefined,
    error: null,
    compensation: record.compensation ?? null,
    resolution: null,
    needsHuman: false,
    reconcileSweeps: 0,
    version: 1,
    createdAtEpochMs: createdAt.getTime(),
    updatedAtEpochMs: nowEpochMs,
    finishedAtEpochMs: null,
    traceId: record.traceId ?? null,
    sentKey: null,
    settlesAtEpochMs: null,
  };
}
