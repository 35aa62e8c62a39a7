import { type AbortReport, DEFAULT_RESERVE_MS, type Deadline, type RunAbortInput } from "@tristate/core";
import type { ApiKeyInfo } from "@tristate/db";
import { AppError } from "../../app-error.ts";
import { NotInTimeError, within } from "../../arrival.ts";
import { isDefaultScopeRun } from "../../mcp/default-scope.ts";
import type { Services } from "../../trpc/context.ts";
import { actingTenant } from "../tenancy.ts";

/**
 * The run abort saga for `runs.abort` (agents) and `runs.operatorAbort` (operators): in the caller's
 * tenant (an admin may name another), recorded with the run first (rule 13: the caller's key, `via`
 * and `reason`), logged with the caller and `log`'s extra fields.
 * Answered by the turn's deadline minus the reserve (issue 21 §1), whatever the database does: past
 * that, 503 with `Retry-After` while the abort goes on (repeating it is safe: it is never done twice).
 * @returns the saga's report (unmasked; the procedure masks what its caller may not see).
 * @throws AppError CONFLICT (field `runId`) for an MCP default-scope run (shared by every conversation
 *   of its key in the window); FORBIDDEN / NOT_FOUND (field `tenant`) from `actingTenant`; UNAVAILABLE
 *   when the abort did not finish by its answer time.
 */
export async function abortInTenant(
  ctx: { services: Services; auth: ApiKeyInfo; setHeader?: (name: string, value: string) => void },
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
  const report = await abortByAnswerTime(ctx, input.runId, deadline, by, tenant);
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

/** Least time an abort is given to answer, ms, even when its turn has less than the reserve left. */
const MIN_ABORT_ANSWER_MS = 250;

/**
 * The executor's `abortRun`, answered by `deadline` minus the reserve: its statements wait as long
 * as the database makes them (a lock, a stall: up to the pool's 30 s statement limit), the turn does
 * not. Past the answer time the abort goes on (its failure is logged) and the caller gets 503.
 * @throws AppError UNAVAILABLE (Retry-After 1 s) when the abort did not finish by its answer time.
 */
async function abortByAnswerTime(
  ctx: { services: Services; setHeader?: (name: string, value: string) => void },
  runId: string,
  deadline: Deadline,
  by: RunAbortInput,
  tenant: string,
): Promise<AbortReport> {
  let answered = false;
  const running = ctx.services.tenants.executor(tenant).abortRun(runId, deadline, by);
  running.catch((error: unknown) => {
    if (answered) ctx.services.logger.warn({ err: error, run_id: runId, tenant }, "run abort failed after its answer");
  });
  const boundMs = Math.max(MIN_ABORT_ANSWER_MS, deadline.remainingMs() - DEFAULT_RESERVE_MS);
  try {
    return await within(running, boundMs, "the run's abort");
  } catch (error) {
    if (!(error instanceof NotInTimeError)) throw error;
    answered = true;
    ctx.services.logger.warn({ run_id: runId, tenant, boundMs }, "run abort did not finish by its answer time (503)");
    ctx.setHeader?.("retry-after", "1");
    throw new AppError(
      "UNAVAILABLE",
      `the abort of run ${runId} did not finish within this turn's time (its deadline minus the ${DEFAULT_RESERVE_MS} ms reserve): the executor's database is slow. It may already be recorded, and it goes on; repeat runs.abort for this run in 1 s for its report — an abort is never done twice`,
      { field: "runId", detail: { retryAfterMs: 1000, retrySame: true } },
    );
  }
}
