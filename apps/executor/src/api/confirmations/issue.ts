import { DEFAULT_CONFIRMATION_TTL_MS } from "@tristate/core";
import { z } from "zod";
import { operatorProcedure } from "../../trpc/init.ts";
import { confirmationCallInput, confirmationOf } from "./subject.ts";

/** Input of `confirmations.issue`: the exact call being confirmed. */
export const issueConfirmationInput = confirmationCallInput
  .extend({
    /** Lifetime of the token, ms (default 15 min, at most 24 h). */
    ttlMs: z
      .number()
      .int()
      .min(1000)
      .max(24 * 3600_000)
      .optional(),
  })
  .strict();

/**
 * `confirmations.issue` (operator) → a token confirming one high-stakes call: its tenant, run, step
 * and tool, its idempotency key (so its identity) and the canonical form of every argument given here
 * (not only the identity fields). The agent passes it as `confirmationToken` to `calls.execute` (or
 * MCP `_meta["io.tristate/confirmationToken"]`); a call with any other argument value is refused
 * before sending, naming the argument. The answer says what the token confirms (`confirms`: the
 * arguments after the tool's schema, defaults filled, masked as the record views mask them), as
 * `confirmations.preview` showed it before.
 * @throws AppError NOT_FOUND for an unknown tool, BAD_INPUT naming the argument that fails the tool's schema.
 */
export const confirmationsIssueProcedure = operatorProcedure
  .input(issueConfirmationInput)
  .mutation(async ({ ctx, input }) => {
    const { services } = ctx;
    const { subject, confirms } = await confirmationOf(ctx, input);
    // The expiry in the database's clock, which every replica's verification reads (rule 9; issue 21 §6).
    const now = await services.db.clockEpochMs();
    const ttlMs = input.ttlMs ?? DEFAULT_CONFIRMATION_TTL_MS;
    const token = services.confirmations.issue(subject, now, ttlMs);
    const key = subject.idempotencyKey;
    services.logger.info({ idempotency_key: key, tool: input.tool, issuer: ctx.auth.name }, "confirmation issued");
    return { token, idempotencyKey: key, expiresAtEpochMs: now + ttlMs, confirms };
  });
