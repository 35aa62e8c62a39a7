import type { AbortReport } from "@tristate/core";
import { z } from "zod";
import { operatorProcedure } from "../../trpc/init.ts";
import { resolveDeadline } from "../calls/execute.ts";
import { idSchema } from "../ids.ts";
import { maskerFor, seesSecrets } from "../secrets.ts";
import { tenantInput } from "../tenancy.ts";
import { abortInTenant } from "./abort-in-tenant.ts";

/** Input of `runs.operatorAbort`: the run, the operator's reason, and (admins) its tenant. */
export const operatorAbortRunInput = z
  .object({
    runId: idSchema,
    /** Why the run is aborted (kept in the executor's log with the operator's name). */
    note: z.string().trim().min(1).max(2000),
    /** The run's tenant (admin keys only; operators act in their key's tenant). */
    tenant: tenantInput,
  })
  .strict();

/**
 * `runs.operatorAbort({ runId, note })` (operator, admin): the dashboard's "Abort run" — the same saga
 * as the agents' `runs.abort` (reconcile unsettled effects, compensate confirmed ones latest step
 * first, irreversible ones corrected or queued for a person), with the default budget
 * (`TRISTATE_DEFAULT_BUDGET_MS`), the operator's name and reason logged. Idempotent: a second abort
 * replays the compensations. Answers the saga's report, with secret argument values (the original
 * calls' and the compensations') masked for every role but admin, as on every read.
 * @throws AppError FORBIDDEN (field `tenant`) when a non-admin names another tenant.
 */
export const operatorAbortRunProcedure = operatorProcedure
  .input(operatorAbortRunInput)
  .mutation(async ({ ctx, input }): Promise<AbortReport> => {
    const { services } = ctx;
    const deadline = resolveDeadline({}, services.now(), {
      maxBudgetMs: services.env.TRISTATE_MAX_BUDGET_MS,
      defaultBudgetMs: services.env.TRISTATE_DEFAULT_BUDGET_MS,
    });
    const { report, tenant } = await abortInTenant(ctx, input, deadline, "runs.operatorAbort", {
      operator: ctx.auth.name,
      note: input.note,
    });
    if (seesSecrets(ctx.auth)) return report;
    const records = new Map(
      (await services.tenants.store(tenant).listByRun(input.runId)).map((r) => [r.key, r] as const),
    );
    const maskers = report.steps.map((step) => {
      const record = records.get(step.key);
      const compensation = record?.compensation as { tool?: unknown } | null | undefined;
      const sent = step.compensation?.sent_args;
      return [
        maskerFor(ctx, step.tool, record?.args, sent),
        ...(typeof compensation?.tool === "string" ? [maskerFor(ctx, compensation.tool, sent, record?.args)] : []),
      ];
    });
    const maskAll = <T>(value: T): T => maskers.flat().reduce((v, m) => m.value(v), value);
    return {
      ...report,
      steps: report.steps.map((step, i) => (maskers[i] ?? []).reduce((s, m) => m.value(s), step)),
      summary: maskAll(report.summary),
    };
  });
