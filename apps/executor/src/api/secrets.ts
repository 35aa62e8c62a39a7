/**
 * Server-side masking of the arguments a tool marks secret (`secretFields`, issue 10). Every read
 * procedure that shows arguments, results, compensations, errors, events or audit snapshots passes
 * them through here: for every role but `admin` each secret value is shown as `maskSecret` does
 * (`***` and its last 4 characters when it has 12 or more, e.g. `***1111` for a card number; `***`
 * otherwise), at its path in the arguments and the identity and wherever else it appears. The
 * stored record keeps the real value (a resend needs it). `calls.execute` and `runs.abort` answer the
 * calling agent its own envelope and report unmasked, as before; `calls.get` masks for agents too.
 */
import { type SecretMasker, secretMasker } from "@tristate/core";
import type { ApiKeyRole } from "@tristate/db";
import type { Services } from "../trpc/context.ts";

/** Only admins read secret arguments in clear. */
export function seesSecrets(auth: { role: ApiKeyRole }): boolean {
  return auth.role === "admin";
}

/** What the masking of a procedure needs from its context. */
export interface MaskingContext {
  auth: { role: ApiKeyRole };
  services: Pick<Services, "executor">;
}

/**
 * The masker of one record for the caller: nothing is masked for an admin, nor for a tool that is
 * not (or no longer) in the catalog, whose secret fields are unknown.
 * @param args the record's stored arguments; `moreArgs` other stored arguments of the same tool
 *   whose secret values must be masked too (an audit entry's snapshots).
 */
export function maskerFor(ctx: MaskingContext, tool: string, args: unknown, ...moreArgs: unknown[]): SecretMasker {
  const spec = seesSecrets(ctx.auth) ? undefined : ctx.services.executor.tools.get(tool);
  return secretMasker(spec, args, ...moreArgs);
}

/**
 * A record-shaped value with its secrets masked: `args` by path (and value), `identity` by field,
 * every other field (result, compensation, error, …) by value.
 */
export function maskRecord<T extends { args: unknown }>(masker: SecretMasker, record: T): T {
  if (!masker.active) return record;
  const { args, ...rest } = record as T & { identity?: unknown };
  const masked = masker.value(rest) as Record<string, unknown>;
  if ("identity" in rest) masked.identity = masker.identity(rest.identity);
  return { ...masked, args: masker.args(args) } as T;
}

/** A record of the read API with its secrets masked for the caller (see {@link maskRecord}). */
export function maskedRecord<T extends { tool: string; args: unknown }>(ctx: MaskingContext, record: T): T {
  return maskRecord(maskerFor(ctx, record.tool, record.args), record);
}
