import type { AbortReport } from "@tristate/core";
import { z } from "zod";
import { agentProcedure } from "../../trpc/init.ts";
import { resolveDeadline } from "../calls/execute.ts";
import { idSchema } from "../ids.ts";
import { tenantInput } from "../tenancy.ts";
import { abortInTenant } from "./abort-in-tenant.ts";

const id = idSchema;

/** Input of `runs.abort`: the run and the turn's deadline (or a budget). */
export const abortRunInput = z
  .object({
    runId: id,
    deadlineEpochMs: z.number().int().positive().optional(),
    budgetMs: z.number().int().positive().optional(),
    /** Why the run is aborted (recorded with the abort and shown on the run page). @default "" */
    reason: z.string().trim().max(2000).optional(),
    /** The run's tenant (admin keys only; others act in their key's tenant). */
    tenant: tenantInput,
  })
  .strict()
  .refine((v) => !(v.deadlineEpochMs !== undefined && v.budgetMs !== undefined), {
    message: "give deadlineEpochMs or budgetMs, not both",
    path: ["budgetMs"],
  });

/**
 * `runs.abort({ runId, reason? })` → the saga's report: the abort recorded with the run first (this
 * key, the reason, the database's time; the first abort's stay), so a new step of the run is refused
 * and a step that settles later is undone; unsettled effects reconciled, then confirmed effects
 * compensated latest step first (each compensation a tool call with its own envelope), irreversible
 * ones corrected or queued for a person; counts of what is undone, still in flight and waiting for
 * a person; a summary the model can read. Idempotent.
 */
export const runsAbortProcedure = agentProcedure
  .input(abortRunInput)
  .mutation(async ({ ctx, input }): Promise<AbortReport> => {
    const { services } = ctx;
    const deadline = resolveDeadline(input, ctx.arrival, {
      maxBudgetMs: services.env.TRISTATE_MAX_BUDGET_MS,
      defaultBudgetMs: services.env.TRISTATE_DEFAULT_BUDGET_MS,
    });
    const why = { via: "agent", reason: input.reason ?? "" } as const;
    const { report } = await abortInTenant(ctx, input, deadline, why, "runs.abort", { caller: ctx.auth.name });
    return report;
  });
