import { z } from "zod";
import { AppError } from "../../app-error.ts";
import { agentProcedure } from "../../trpc/init.ts";
import { agentStepIdSchema, idSchema } from "../ids.ts";
import { actingTenant, tenantInput } from "../tenancy.ts";

const id = idSchema;

/** Input of `runs.plan`: the run's steps in order. */
export const planRunInput = z
  .object({
    runId: id,
    steps: z
      .array(z.object({ stepId: agentStepIdSchema, tool: z.string().min(1).max(128) }).strict())
      .min(1)
      .max(500),
    /** The run's tenant (admin keys only; others act in their key's tenant). */
    tenant: tenantInput,
  })
  .strict();

/**
 * `runs.plan({ runId, steps })` declares (or replaces) a run's plan. Irreversible steps are then
 * refused (`IRREVERSIBLE_BEFORE_FALLIBLE`) while a later step with a side effect is not done.
 * @throws AppError BAD_INPUT naming the step (duplicate step ids, unknown tools).
 */
export const runsPlanProcedure = agentProcedure.input(planRunInput).mutation(async ({ ctx, input }) => {
  const seen = new Set<string>();
  for (const [i, step] of input.steps.entries()) {
    if (seen.has(step.stepId))
      throw new AppError("BAD_INPUT", `steps.${i}.stepId "${step.stepId}" appears twice`, {
        field: `steps.${i}.stepId`,
      });
    seen.add(step.stepId);
    if (!ctx.services.executor.tools.has(step.tool)) {
      throw new AppError("BAD_INPUT", `steps.${i}.tool "${step.tool}" is not in the catalog`, {
        field: `steps.${i}.tool`,
      });
    }
  }
  const tenant = await actingTenant(ctx, input.tenant);
  await ctx.services.tenants.executor(tenant).declarePlan(input.runId, input.steps);
  return { runId: input.runId, steps: input.steps.length };
});
