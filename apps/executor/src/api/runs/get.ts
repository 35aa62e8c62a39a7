import { z } from "zod";
import { AppError } from "../../app-error.ts";
import { viewerProcedure } from "../../trpc/init.ts";
import { idSchema } from "../ids.ts";
import { intentSummarySchema } from "../read-schemas.ts";
import { maskedRecord } from "../secrets.ts";
import { readTenant, tenantInput } from "../tenancy.ts";

/** Input of `runs.get`: an agent run id. */
export const getRunInput = z
  .object({
    runId: idSchema,
    /** Admin keys: only this tenant's run (default: the run id in every tenant). Others: their own tenant. */
    tenant: tenantInput,
  })
  .strict();

/** Output of `runs.get`: the run's records (its steps) in creation order, and its declared plan. */
export const getRunOutput = z.object({
  runId: z.string(),
  /** Empty for a run with a declared plan and no call yet. */
  records: z.array(intentSummarySchema),
  /** True when the run has more records than returned (1000). */
  truncated: z.boolean(),
  /** The plan declared with `runs.plan` (steps in order; when declared, epoch ms), or null. */
  plan: z
    .object({
      steps: z.array(z.object({ stepId: z.string(), tool: z.string() })),
      declaredAtEpochMs: z.number(),
    })
    .nullable(),
});

/**
 * `runs.get({ runId })` → the run's intent records, oldest first, and its declared plan; secret
 * argument values masked for every role but admin. A run with only a plan answers `records: []`.
 * @throws AppError NOT_FOUND (field `runId`) when the run has neither records nor a plan (in the tenant).
 */
export const runsGetProcedure = viewerProcedure
  .input(getRunInput)
  .output(getRunOutput)
  .query(async ({ ctx, input }) => {
    const tenant = readTenant(ctx, input.tenant);
    const run = await ctx.services.db.reads(tenant).getRun(input.runId);
    if (!run)
      throw new AppError("NOT_FOUND", `no intent records and no plan for run ${input.runId}`, { field: "runId" });
    return { ...run, records: run.records.map((r) => maskedRecord(ctx, r)) };
  });
