/**
 * What a confirmation confirms, as `confirmations.preview` and `confirmations.issue` both answer it:
 * the call (tenant, run, step, tool, idempotency key) and its arguments after the tool's schema
 * (defaults filled), secret ones masked as the record views mask them (every role but admin).
 */
import { type ConfirmationSubject, isInvalidArgumentsError, type JsonValue, toJson } from "@tristate/core";
import type { ApiKeyInfo } from "@tristate/db";
import { z } from "zod";
import { AppError } from "../../app-error.ts";
import type { Services } from "../../trpc/context.ts";
import { agentStepIdSchema, idSchema } from "../ids.ts";
import { maskerFor } from "../secrets.ts";
import { actingTenant, tenantInput } from "../tenancy.ts";

/** The call being confirmed, as `confirmations.preview` and `confirmations.issue` take it. */
export const confirmationCallInput = z.object({
  runId: idSchema,
  stepId: agentStepIdSchema,
  tool: z.string().min(1).max(128),
  args: z.record(z.string(), z.unknown()),
  /** The call's tenant (admin keys only; operators confirm calls of their own tenant). */
  tenant: tenantInput,
});

/** What a token confirms, shown to the operator before and after issuing it. */
export interface ConfirmedCall {
  tenant: string;
  runId: string;
  stepId: string;
  tool: string;
  /** The arguments the token binds (after the tool's schema), secret values masked for every role but admin. */
  args: JsonValue;
}

/**
 * The subject of a confirmation of `input`'s call in the caller's tenant, and how to show it.
 * @throws AppError NOT_FOUND (field `tool`) for a tool not in the catalog; BAD_INPUT naming
 *   `args.<field>` for arguments the tool refuses; FORBIDDEN (field `tenant`) for another tenant.
 */
export async function confirmationOf(
  ctx: { services: Services; auth: ApiKeyInfo },
  input: z.infer<typeof confirmationCallInput>,
): Promise<{ subject: ConfirmationSubject; confirms: ConfirmedCall }> {
  const { services } = ctx;
  if (!services.executor.tools.has(input.tool)) {
    throw new AppError("NOT_FOUND", `tool "${input.tool}" is not in the catalog`, { field: "tool" });
  }
  const executor = services.tenants.executor(await actingTenant(ctx, input.tenant));
  let request: ReturnType<typeof executor.confirmationFor>;
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
  const masker = maskerFor(ctx, input.tool, input.args);
  const confirms: ConfirmedCall = {
    tenant: subject.tenant,
    runId: subject.runId,
    stepId: subject.stepId,
    tool: subject.tool,
    args: masker.args(toJson(request.parsedArgs) ?? null),
  };
  return { subject, confirms };
}
