import { randomUUID } from "node:crypto";
import { type AbortReport, type IntentRecord, OPERATOR_ACTION_ID_RULE } from "@tristate/core";
import { RUN_ABORT_ACTION, RUN_AUDIT_KEY_PREFIX } from "@tristate/db";
import { z } from "zod";
import { AppError } from "../../app-error.ts";
import { operatorProcedure } from "../../trpc/init.ts";
import { resolveDeadline } from "../calls/execute.ts";
import { idSchema } from "../ids.ts";
import { type MaskingContext, maskerFor, seesSecrets } from "../secrets.ts";
import { actingTenant, tenantInput } from "../tenancy.ts";
import { abortInTenant } from "./abort-in-tenant.ts";

/** Input of `runs.operatorAbort`: the run, the operator's reason, an optional action id, and (admins) its tenant. */
export const operatorAbortRunInput = z
  .object({
    runId: idSchema,
    /** Why the run is aborted (kept in the audit entry, secret values masked, and in the executor's log). */
    note: z.string().trim().min(1).max(2000),
    /**
     * Client-chosen id of this abort (a UUID or 8–100 URL-safe characters): a repeat runs the saga
     * again (harmless: the compensations replay) but writes no second audit entry. @default a new UUID
     */
    operatorActionId: z
      .string()
      .regex(OPERATOR_ACTION_ID_RULE, "must be a UUID or 8–100 URL-safe characters (A–Z a–z 0–9 _ -)")
      .optional(),
    /** The run's tenant (admin keys only; operators act in their key's tenant). */
    tenant: tenantInput,
  })
  .strict();

/** What `runs.operatorAbort` answers: the saga's report and its audit entry. */
export type OperatorAbortAnswer = AbortReport & {
  audit: { id: number; operatorActionId: string; actor: string; atEpochMs: number; replayed: boolean };
};

/**
 * `runs.operatorAbort({ runId, note, operatorActionId? })` (operator, admin): the dashboard's "Abort
 * run" — the same saga as the agents' `runs.abort` (the abort recorded with the run first, with the
 * operator's key and the note as its reason, secret values masked; reconcile unsettled effects, compensate confirmed
 * ones latest step first, irreversible ones corrected or queued for a person), with the default budget
 * (`TRISTATE_DEFAULT_BUDGET_MS`), then an audit entry in the run's tenant (action `abort_run`: the
 * operator's key and name, the run, the note and the report's summary and steps, secret values masked
 * for every reader) and a log line. Idempotent: a second abort replays the compensations; a repeated
 * `operatorActionId` writes no second entry (`audit.replayed`). Answers the report, with secret
 * argument values (the original calls' and the compensations') masked for every role but admin.
 * @throws AppError FORBIDDEN (field `tenant`) when a non-admin names another tenant; CONFLICT (field
 *   `operatorActionId`, `detail.reason` ACTION_ID_REUSED) when the id was used for another action or run.
 */
export const runsOperatorAbortProcedure = operatorProcedure
  .input(operatorAbortRunInput)
  .mutation(async ({ ctx, input }): Promise<OperatorAbortAnswer> => {
    const { services } = ctx;
    const tenant = await actingTenant(ctx, input.tenant);
    const operators = services.tenants.operatorStore(tenant);
    const operatorActionId = input.operatorActionId ?? randomUUID();
    if (input.operatorActionId !== undefined) {
      const prior = await operators.findAudit(operatorActionId);
      if (
        prior &&
        ((prior.action as string) !== RUN_ABORT_ACTION || prior.key !== RUN_AUDIT_KEY_PREFIX + input.runId)
      ) {
        throw idReused(operatorActionId, prior);
      }
    }
    const deadline = resolveDeadline({}, ctx.arrival, {
      maxBudgetMs: services.env.TRISTATE_MAX_BUDGET_MS,
      defaultBudgetMs: services.env.TRISTATE_DEFAULT_BUDGET_MS,
    });
    // The note is the abort's reason (rule 13), stored masked for every reader like the audit entry's.
    const before = await services.tenants.store(tenant).listByRun(input.runId);
    const reason = before
      .map((r) => maskerFor({ auth: { role: "operator" }, services }, r.tool, r.args))
      .reduce((text, m) => m.text(text), input.note);
    const why = { via: "operator", reason } as const;
    const { report } = await abortInTenant(ctx, { runId: input.runId, tenant }, deadline, why, "runs.operatorAbort", {
      operator: ctx.auth.name,
      note: input.note,
      operator_action_id: operatorActionId,
    });
    const records = await services.tenants.store(tenant).listByRun(input.runId);
    // Stored masked for every reader, like an operator's note on a record (`{field}` there).
    const stored = reportMasker({ auth: { role: "operator" }, services }, report, records);
    const audited = await operators.recordRunAbort({
      operatorActionId,
      actorKeyId: ctx.auth.id,
      actorName: ctx.auth.name,
      nowEpochMs: services.now(),
      runId: input.runId,
      note: stored.text(input.note),
      report: stored.report,
    });
    if (audited.kind === "id_taken") throw idReused(operatorActionId, audited);
    const entry = audited.entry;
    const answer = seesSecrets(ctx.auth) ? report : reportMasker(ctx, report, records).report;
    return {
      ...answer,
      audit: {
        id: entry.id,
        operatorActionId: entry.operatorActionId,
        actor: entry.actorName,
        atEpochMs: entry.atEpochMs,
        replayed: audited.kind === "replayed",
      },
    };
  });

/** The CONFLICT for an operatorActionId that belongs to another action or run. */
function idReused(id: string, prior: { action: string; key: string; actorName: string; atEpochMs: number }): AppError {
  return new AppError(
    "CONFLICT",
    `operatorActionId ${id} was already used by ${prior.actorName} for ${prior.action} on ${prior.key}; use a new id for a new action`,
    {
      field: "operatorActionId",
      detail: { reason: "ACTION_ID_REUSED", key: prior.key, action: prior.action, at: prior.atEpochMs },
    },
  );
}

/**
 * The report with the secret values of the run's calls and compensations masked for `ctx`'s role
 * (nothing for an admin), and a masker of free text with all of them.
 */
function reportMasker(
  ctx: MaskingContext,
  report: AbortReport,
  records: readonly IntentRecord[],
): { report: AbortReport; text(value: string): string } {
  const byKey = new Map(records.map((r) => [r.key, r] as const));
  const maskers = report.steps.map((step) => {
    const record = byKey.get(step.key);
    const compensation = record?.compensation;
    const sent = step.compensation?.sent_args;
    return [
      maskerFor(ctx, step.tool, record?.args, sent),
      ...(compensation ? [maskerFor(ctx, compensation.tool, sent, record?.args)] : []),
    ];
  });
  const all = maskers.flat();
  const maskAll = <T>(value: T): T => all.reduce((v, m) => m.value(v), value);
  return {
    report: {
      ...report,
      steps: report.steps.map((step, i) => (maskers[i] ?? []).reduce((s, m) => m.value(s), step)),
      summary: maskAll(report.summary),
    },
    text: (value) => all.reduce((v, m) => m.text(v), value),
  };
}
