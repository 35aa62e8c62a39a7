import { operatorProcedure } from "../../trpc/init.ts";
import { confirmationCallInput, confirmationOf } from "./subject.ts";

/** Input of `confirmations.preview`: the call an operator is about to confirm. */
export const previewConfirmationInput = confirmationCallInput.strict();

/**
 * `confirmations.preview` (operator) → what `confirmations.issue` would confirm for this call, without
 * issuing anything: the call (tenant, run, step, tool), its idempotency key, and the arguments after
 * the tool's schema (defaults filled, secret values masked for all but admins). The dashboard shows
 * it in the confirm dialog before the operator issues the token.
 * @throws AppError NOT_FOUND for an unknown tool, BAD_INPUT naming the argument that fails the tool's
 *   schema, FORBIDDEN (field `tenant`) for another tenant's call.
 */
export const confirmationsPreviewProcedure = operatorProcedure
  .input(previewConfirmationInput)
  .query(async ({ ctx, input }) => {
    const { subject, confirms } = await confirmationOf(ctx, input);
    return { idempotencyKey: subject.idempotencyKey, confirms };
  });
