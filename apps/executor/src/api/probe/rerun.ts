import { INTENT_STATUSES } from "@tristate/core";
import { z } from "zod";
import { AppError } from "../../app-error.ts";
import { operatorProcedure } from "../../trpc/init.ts";
import { keySchema } from "../operator-support.ts";
import { maskerFor, seesSecrets } from "../secrets.ts";
import { tenantForKey } from "../tenancy.ts";

/** Input of `probe.rerun`. */
export const probeRerunInput = z.object({ key: keySchema }).strict();

/** Output of `probe.rerun`: each probe's answer now; the record is unchanged unless `reopened`. */
export const probeRerunOutput = z.object({
  key: z.string(),
  tool: z.string(),
  status: z.enum(INTENT_STATUSES),
  version: z.number().int(),
  keyExpired: z.boolean(),
  probes: z.array(
    z.object({
      probe: z.enum(["key", "identity"]),
      /** `unclear`: the request's item was found, but its state does not show whether the effect happened. */
      answer: z.enum(["found", "unclear", "absent", "failed"]),
      found: z.unknown().optional(),
      message: z.string().optional(),
      /** False for the key probe after key retention: its "absent" proves nothing. */
      absenceCounts: z.boolean(),
      durationMs: z.number(),
    }),
  ),
  summary: z.string(),
  /** True when the answers contradicted the record's settled state and it was reopened for a person (rule 16). */
  reopened: z.boolean(),
});

/**
 * `probe.rerun({ key })` (operator, admin): runs the tool's key and identity probes once each, now,
 * and shows their answers. Looking settles nothing (settle a found effect with `queue.resolve` →
 * `confirm_effect`); the one write is rule 16's: answers that contradict a settled record (an effect
 * found under the key of a record settled as not having happened) reopen it for a person
 * (`reopened: true`, `CONTRADICTING_EVIDENCE`). Errors: unknown key → NOT_FOUND; tool not in the
 * catalog → CONFLICT. Secret argument values in the probes' answers are masked for every role but admin.
 */
export const probeRerunProcedure = operatorProcedure
  .input(probeRerunInput)
  .output(probeRerunOutput)
  .mutation(async ({ ctx, input }) => {
    const tenant = await tenantForKey(ctx, input.key);
    if (tenant === null) throw new AppError("NOT_FOUND", `no intent record with key ${input.key}`, { field: "key" });
    const report = await ctx.services.tenants.executor(tenant).rerunProbes(input.key);
    ctx.services.logger.info(
      { idempotency_key: input.key, operator: ctx.auth.name, answers: report.probes.map((p) => p.answer) },
      "probe.rerun",
    );
    if (seesSecrets(ctx.auth)) return report;
    const record = await ctx.services.tenants.store(tenant).get(input.key);
    return maskerFor(ctx, report.tool, record?.args).value(report);
  });
