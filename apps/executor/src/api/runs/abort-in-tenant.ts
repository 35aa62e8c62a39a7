import type { AbortReport, Deadline, RunAbortInput } from "@tristate/core";
import type { ApiKeyInfo } from "@tristate/db";
import type { Services } from "../../trpc/context.ts";
import { actingTenant } from "../tenancy.ts";

/**
 * The run abort saga for `runs.abort` (agents) and `runs.operatorAbort` (operators): in the caller's
 * tenant (an admin may name another), recorded with the run first (rule 13: the caller's key, `via`
 * and `reason`), logged with the caller and `log`'s extra fields.
 * @returns the saga's report (unmasked; the procedure masks what its caller may not see).
 * @throws AppError FORBIDDEN / NOT_FOUND (field `tenant`) from `actingTenant`.
 */
export async function abortInTenant(
  ctx: { services: Services; auth: ApiKeyInfo },
  input: { runId: string; tenant?: string | undefined },
  deadline: Deadline,
  why: Pick<RunAbortInput, "via" | "reason">,
  event: string,
  log: Record<string, unknown>,
): Promise<{ report: AbortReport; tenant: string }> {
  const tenant = await actingTenant(ctx, input.tenant);
  const by: RunAbortInput = { actorKeyId: ctx.auth.id, actorName: ctx.auth.name, ...why };
  const report = await ctx.services.tenants.executor(tenant).abortRun(input.runId, deadline, by);
  ctx.services.logger.info(
    {
      run_id: input.runId,
      complete: report.complete,
      undone: report.undone,
      in_flight: report.inFlight,
      needs_human: report.needsHuman,
      aborted_at: report.abort.abortedAtEpochMs,
      steps: report.steps.map((s) => `${s.stepId}:${s.outcome}`),
      tenant,
      ...log,
    },
    event,
  );
  return { report, tenant };
}
