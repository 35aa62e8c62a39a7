import type { AbortReport, Deadline, RunAbortInput } from "@tristate/core";
import type { ApiKeyInfo } from "@tristate/db";
import { AppError } from "../../app-error.ts";
import { isDefaultScopeRun } from "../../mcp/default-scope.ts";
import type { Services } from "../../trpc/context.ts";
import { actingTenant } from "../tenancy.ts";

/**
 * The run abort saga for `runs.abort` (agents) and `runs.operatorAbort` (operators): in the caller's
 * tenant (an admin may name another), recorded with the run first (rule 13: the caller's key, `via`
 * and `reason`), logged with the caller and `log`'s extra fields.
 * @returns the saga's report (unmasked; the procedure masks what its caller may not see).
 * @throws AppError CONFLICT (field `runId`) for an MCP default-scope run (shared by every conversation
 *   of its key in the window); FORBIDDEN / NOT_FOUND (field `tenant`) from `actingTenant`.
 */
export async function abortInTenant(
  ctx: { services: Services; auth: ApiKeyInfo },
  input: { runId: string; tenant?: string | undefined },
  deadline: Deadline,
  why: Pick<RunAbortInput, "via" | "reason">,
  event: string,
  log: Record<string, unknown>,
): Promise<{ report: AbortReport; tenant: string }> {
  if (isDefaultScopeRun(input.runId)) {
    // One run for every MCP conversation of a key that named none in its window: aborting it would
    // refuse and undo them all (rule 13 over rule 15's default scope). Refused; nothing recorded.
    throw new AppError(
      "CONFLICT",
      `run ${input.runId} is an MCP default scope: every conversation of its key in that window that named no run shares it, so aborting it would abort them all. Nothing was aborted. Clients that need to abort a conversation pass io.tristate/runId; an operator can compensate a step from its record, or revoke the key`,
      { field: "runId" },
    );
  }
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
