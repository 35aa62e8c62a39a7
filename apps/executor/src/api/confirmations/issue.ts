import { DEFAULT_CONFIRMATION_TTL_MS, isInvalidArgumentsError } from "@tristate/core";
import { z } from "zod";
import { AppError } from "../../app-error.ts";
import { operatorProcedure } from "../../trpc/init.ts";
import { agentStepIdSchema, idSchema } from "../ids.ts";
import { actingTenant, tenantInput } from "../tenancy.ts";

const id = idSchema;

/** Input of `confirmations.issue`: the exact call being confirmed. */
export const issueConfirmationInput = z
  .object({
    runId: id,
    stepId: agentStepIdSchema,
    tool: z.string().min(1).max(128),
    args: z.record(z.string(), z.unknown()),
    /** Lifetime of the token, ms (default 15 min, at most 24 h). */
    ttlMs: z
      .number()
      .int()
      .min(1000)
      .max(24 * 3600_000)
      .optional(),
    /** The call's tenant (admin keys only; operators confirm calls of their own tenant). */
    tenant: tenantInput,
  })
  .strict();

/**
 * `confirmations.issue` (operator) → a token confirming one high-stakes call (bound to its
 * idempotency key: the same run, step, tool and identity fields). The agent passes it as
 * `confirmationToken` to `calls.execute`.
 * @throws AppError NOT_FOUND for an unknown tool, BAD_INPUT naming the argument that fails the tool's schema.
 */
export const confirmationsIssueProcedure = operatorProcedure
  .input(issueConfirmationInput)
  .mutation(async ({ ctx, input }) => {
    const { services } = ctx;
    if (!services.executor.tools.has(input.tool)) {
      throw new AppError("NOT_FOUND", `tool "${input.tool}" is not in the catalog`, { field: "tool" });
    }
    const executor = services.tenants.executor(await actingTenant(ctx, input.tenant));
    let key: string;
    try {
      // Arguments that fail the tool throw InvalidArgumentsError: BAD_INPUT naming `args.<field>` (trpc/init.ts).
      key = executor.keyFor({ runId: input.runId, stepId: input.stepId, tool: input.tool, args: input.args });
    } catch (error) {
      // Anything else keyFor throws comes from the tool's own canonicaliser: the arguments' fault too.
      if (isInvalidArgumentsError(error)) throw error;
      throw new AppError("BAD_INPUT", error instanceof Error ? error.message : String(error), { field: "args" });
    }
    const now = services.now();
    const ttlMs = input.ttlMs ?? DEFAULT_CONFIRMATION_TTL_MS;
    const token = services.confirmations.issue(key, now, ttlMs);
    services.logger.info({ idempotency_key: key, tool: input.tool, issuer: ctx.auth.name }, "confirmation issued");
    return { token, idempotencyKey: key, expiresAtEpochMs: now + ttlMs };
  });
