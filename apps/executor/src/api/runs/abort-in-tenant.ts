import type { AbortReport, Deadline } from "@tristate/core";
import type { ApiKeyInfo } from "@tristate/db";
import type { Services } from "../../trpc/context.ts";
import { actingTenant } from "../tenancy.ts";

/**
 * The run abort saga for `runs.abort` (agents) and `runs.operatorAbort` (operators): in the caller's
 * tenant (an admin may name another), logged with the caller and `log`'s extra fields.
 * @returns the saga's report (unmasked; the procedure masks what its caller may not see).
 * @throws AppError FORBIDDEN / NOT_FOUND (field `tenant`) from `actingTenant`.
 */
export async function abortInTenant(
  ctx: { services: Services; auth: ApiKeyInfo },
  input: { runId: string; tenant?: string | undefined },
  deadline: Deadline,
  event: string,
  log: Record<string, unknown>,
): Promise<{ report: AbortReport; tenant: string }> {
  const tenant = await actingTenant(ctx, input.tenant);
  const report = await ctx.services.tenants.executor(tenant).abortRun(input.runId, deadline);
  ctx.services.logger.info(
    {
      run_id: input.runId,
      complete: report.complete,
      needs_human: report.needsHuman,
      steps: report.steps.map((s) => `${s.stepId}:${s.outcome}`),
      tenant,
      ...log,
    },
    event,
  );
  return { report, tenant };
}
