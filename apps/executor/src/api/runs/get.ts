import { RUN_ABORT_VIAS } from "@tristate/core";
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
  /**
   * The run's abort (rule 13), or null: who (`actorName`, `via`), when (epoch ms, the database's
   * clock) and why, and the keys of its steps by where they stand — `undone`, `inFlight` (undone
   * when they settle), `waitingForPerson`; `complete` when neither of the last two has any.
   */
  abort: z
    .object({
      abortedAtEpochMs: z.number(),
      actorName: z.string(),
      via: z.enum(RUN_ABORT_VIAS),
      reason: z.string(),
      undone: z.array(z.string()),
      inFlight: z.array(z.string()),
      waitingForPerson: z.array(z.string()),
      complete: z.boolean(),
    })
    .nullable(),
});

/**
 * `runs.get({ runId })` → the run's intent records, oldest first, its declared plan and its abort;
 * secret argument values masked for every role but admin. A run with only a plan answers `records: []`.
 * @throws AppError NOT_FOUND (field `runId`) when the run has no records, no plan and no abort (in the tenant).
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
