/**
 * Operators' run aborts in the audit table (issue 14 §3): `runs.operatorAbort` is a run-level action,
 * not a change of one record, so its row in `audit_entries` has `action` {@link RUN_ABORT_ACTION},
 * `key` {@link RUN_AUDIT_KEY_PREFIX} + the run id (never a record key, which is hex: the record
 * look-ups of the operator actions never meet it), `tool` "" (none), `before` `{ runId }` and `after`
 * the saga's report (with secret values masked by the caller before storing). The unique
 * (tenant, operator_action_id) makes a repeated request write one row.
 */
import type { AbortReport } from "@tristate/core";
import { Prisma, type PrismaClient } from "./generated/prisma/client.ts";
import { RUN_ABORT_ACTION, RUN_AUDIT_KEY_PREFIX } from "./queries/list-runs.ts";

/** The part of an abort report the audit keeps: no envelopes (their results may be large). */
export interface AuditedAbortReport {
  summary: string;
  /** Every confirmed effect compensated or corrected, nothing left undecided. */
  complete: boolean;
  /** Steps the abort left to a person (in the human queue). */
  needsHuman: number;
  /** Per step, latest first: the original record and what the abort did with it. */
  steps: { stepId: string; tool: string; key: string; status: string; outcome: string }[];
}

/** An operator's run abort as `audit.list` returns it. Times are epoch ms. */
export interface RunAbortAuditEntry {
  id: number;
  tenant: string;
  operatorActionId: string;
  actorKeyId: string;
  actorName: string;
  atEpochMs: number;
  action: typeof RUN_ABORT_ACTION;
  /** The operator's reason. */
  note: string;
  /** `run:` and the run id (the column the entry is found by). */
  key: string;
  /** Always "" (a run has no single tool). */
  tool: string;
  runId: string;
  report: AuditedAbortReport;
}

/** What {@link recordRunAbort} writes. */
export interface RunAbortAudit {
  operatorActionId: string;
  actorKeyId: string;
  actorName: string;
  /** Epoch ms. */
  nowEpochMs: number;
  runId: string;
  note: string;
  report: AbortReport;
}

/** What {@link recordRunAbort} did: wrote the row, or found the id's row (`replayed`; maybe another action's). */
export type RunAbortAuditResult =
  | { kind: "recorded"; entry: RunAbortAuditEntry }
  | { kind: "replayed"; entry: RunAbortAuditEntry }
  | { kind: "id_taken"; action: string; key: string; actorName: string; atEpochMs: number };

/** The audited part of a report. */
export function auditedReport(report: AbortReport): AuditedAbortReport {
  return {
    summary: report.summary,
    complete: report.complete,
    needsHuman: report.needsHuman,
    steps: report.steps.map((s) => ({
      stepId: s.stepId,
      tool: s.tool,
      key: s.key,
      status: s.status,
      outcome: s.outcome,
    })),
  };
}

/** A row of `audit_entries` as Prisma returns it. */
export interface AuditEntryRow {
  id: bigint;
  tenant: string;
  operatorActionId: string;
  actorKeyId: string;
  actorName: string;
  at: Date;
  action: string;
  note: string;
  key: string;
  tool: string;
  before: unknown;
  after: unknown;
}

/** True for a run abort's row. */
export function isRunAbortRow(row: { action: string }): boolean {
  return row.action === RUN_ABORT_ACTION;
}

/** A run abort's row as an entry. */
export function toRunAbortEntry(row: AuditEntryRow): RunAbortAuditEntry {
  const after = (row.after ?? {}) as Partial<AuditedAbortReport> & { runId?: string };
  return {
    id: Number(row.id),
    tenant: row.tenant,
    operatorActionId: row.operatorActionId,
    actorKeyId: row.actorKeyId,
    actorName: row.actorName,
    atEpochMs: row.at.getTime(),
    action: RUN_ABORT_ACTION,
    note: row.note,
    key: row.key,
    tool: row.tool,
    runId: after.runId ?? row.key.slice(RUN_AUDIT_KEY_PREFIX.length),
    report: {
      summary: after.summary ?? "",
      complete: after.complete ?? false,
      needsHuman: after.needsHuman ?? 0,
      steps: after.steps ?? [],
    },
  };
}

/**
 * Writes the audit row of an operator's run abort in `tenant`, once per operatorActionId: a repeat of
 * the same abort (same run) is answered `replayed` with the first row; an id already used for
 * another action or run is answered `id_taken` (nothing written).
 * @throws when the database fails.
 */
export async function recordRunAbort(
  prisma: PrismaClient,
  tenant: string,
  audit: RunAbortAudit,
): Promise<RunAbortAuditResult> {
  const key = `${RUN_AUDIT_KEY_PREFIX}${audit.runId}`;
  const after = { runId: audit.runId, ...auditedReport(audit.report) } as Prisma.InputJsonObject;
  const inserted = await prisma.$queryRaw<AuditEntryRow[]>(Prisma.sql`
    INSERT INTO audit_entries (tenant, operator_action_id, actor_key_id, actor_name, at, action, note, key, tool, before, after)
    VALUES (${tenant}, ${audit.operatorActionId}, ${audit.actorKeyId}, ${audit.actorName},
      ${new Date(audit.nowEpochMs)}::timestamptz, ${RUN_ABORT_ACTION}, ${audit.note}, ${key}, '',
      ${JSON.stringify({ runId: audit.runId })}::jsonb, ${JSON.stringify(after)}::jsonb)
    ON CONFLICT (tenant, operator_action_id) DO NOTHING
    RETURNING id, tenant, operator_action_id AS "operatorActionId", actor_key_id AS "actorKeyId",
      actor_name AS "actorName", at, action, note, key, tool, before, after`);
  const row = inserted[0];
  if (row) return { kind: "recorded", entry: toRunAbortEntry(row) };
  const prior = await prisma.auditEntry.findUniqueOrThrow({
    where: { tenant_operatorActionId: { tenant, operatorActionId: audit.operatorActionId } },
  });
  if (isRunAbortRow(prior) && prior.key === key) return { kind: "replayed", entry: toRunAbortEntry(prior) };
  return {
    kind: "id_taken",
    action: prior.action,
    key: prior.key,
    actorName: prior.actorName,
    atEpochMs: prior.at.getTime(),
  };
}
