import { DEFAULT_CONFIRMATION_TTL_MS, type Executor, isInvalidArgumentsError, toJson } from "@tristate/core";
import { z } from "zod";
import { AppError } from "../../app-error.ts";
import { operatorProcedure } from "../../trpc/init.ts";
import { agentStepIdSchema, idSchema } from "../ids.ts";
import { maskerFor } from "../secrets.ts";
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
 * `confirmations.issue` (operator) → a token confirming one high-stakes call: its tenant, run, step
 * and tool, its idempotency key (so its identity) and the canonical form of every argument given here
 * (not only the identity fields). The agent passes it as `confirmationToken` to `calls.execute` (or
 * MCP `_meta["io.tristate/confirmationToken"]`); a call with any other argument value is refused
 * before sending, naming the argument. The answer says what the token confirms (`confirms`: the
 * arguments after the tool's schema, defaults filled, masked as the record views mask them).
 * @throws AppError NOT_FOUND for an unknown tool, BAD_INPUT naming the argument that fails the tool's schema.
 */
export const confirmationsIssueProcedure = operatorProcedure
  .input(issueConfirmationInput)
  .mutation(async ({ ctx, input }) => {
    const { services } = ctx;
    if (!services.executor.tools.has(input.tool)) {
      throw new AppError("NOT_FOUND", `tool "${input.tool}" is not in the catalog`, { field: "tool" });
    }
    const tenant = await actingTenant(ctx, input.tenant);
    const executor = services.tenants.executor(tenant);
    let request: ReturnType<Executor["confirmationFor"]>;
    try {
      // Arguments that fail the tool throw InvalidArgumentsError: BAD_INPUT naming `args.<field>` (trpc/init.ts).
      request = executor.confirmationFor({
        runId: input.runId,
        stepId: input.stepId,
        tool: input.tool,
        args: input.args,
      });
    } catch (error) {
      // Anything else it throws comes from the tool's own canonicaliser: the arguments' fault too.
      if (isInvalidArgumentsError(error)) throw error;
      throw new AppError("BAD_INPUT", error instanceof Error ? error.message : String(error), { field: "args" });
    }
    const { subject } = request;
    const now = services.now();
    const ttlMs = input.ttlMs ?? DEFAULT_CONFIRMATION_TTL_MS;
    const token = services.confirmations.issue(subject, now, ttlMs);
    const key = subject.idempotencyKey;
    services.logger.info({ idempotency_key: key, tool: input.tool, issuer: ctx.auth.name }, "confirmation issued");
    const masker = maskerFor(ctx, input.tool, input.args);
    return {
      token,
      idempotencyKey: key,
      expiresAtEpochMs: now + ttlMs,
      /** What the token confirms: this call, and exactly these argument values (secrets masked for all but admins). */
      confirms: {
        tenant: subject.tenant,
        runId: subject.runId,
        stepId: subject.stepId,
        tool: subject.tool,
        args: masker.args(toJson(request.parsedArgs) ?? null),
      },
    };
  });
