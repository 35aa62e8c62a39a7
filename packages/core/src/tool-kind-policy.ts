/**
 * What a tool's kind means, in one place (DESIGN.md vocabulary, rule 5): every site that treats
 * kinds differently reads a fact from {@link toolKindPolicy} instead of comparing `tool.kind` with a
 * literal, so a new kind fails to compile here, and only here, until its facts are stated.
 */
import type { ToolKind } from "./statuses.ts";

/** The facts about one tool kind that the executor, the catalog and the operator tools act on. */
export interface ToolKindPolicy {
  /**
   * The call can change something remotely (`idempotent_by_key`, `unsafe`): it writes an intent
   * record, must declare identity fields and can be resent by an operator. False for `read_only`
   * (a plain retry is fine; no record; an MCP `readOnlyHint`).
   */
  readonly hasEffect: boolean;
  /**
   * The remote deduplicates requests by idempotency key (`idempotent_by_key`): a resend within key
   * retention needs no proof of absence, and the key must reach the remote (an MCP tool declares the
   * argument that carries it).
   */
  readonly remoteDedupesKey: boolean;
  /**
   * The remote has no key support (`unsafe`): a key's age says nothing about it, a resend can make a
   * second effect, and absence proves something only after a declared settle window (`settleMs`),
   * without which it is never resent on absence (rule 5b).
   */
  readonly remoteIgnoresKey: boolean;
}

const READ_ONLY: ToolKindPolicy = Object.freeze({ hasEffect: false, remoteDedupesKey: false, remoteIgnoresKey: false });
const IDEMPOTENT_BY_KEY: ToolKindPolicy = Object.freeze({
  hasEffect: true,
  remoteDedupesKey: true,
  remoteIgnoresKey: false,
});
const UNSAFE: ToolKindPolicy = Object.freeze({ hasEffect: true, remoteDedupesKey: false, remoteIgnoresKey: true });

/**
 * The policy of a tool kind. Exhaustive: adding a kind to `TOOL_KINDS` fails to compile here until
 * its facts are given.
 * @throws Error when `kind` is not a tool kind (a value that bypassed validation).
 */
export function toolKindPolicy(kind: ToolKind): ToolKindPolicy {
  switch (kind) {
    case "read_only":
      return READ_ONLY;
    case "idempotent_by_key":
      return IDEMPOTENT_BY_KEY;
    case "unsafe":
      return UNSAFE;
    default:
      return unknownKind(kind);
  }
}

function unknownKind(kind: never): never {
  throw new Error(`unknown tool kind: ${String(kind)}`);
}

/**
 * Whether a tool resends on absence when it does not say (`resendWhenAbsent` unset): a keyed tool
 * does (the remote dedupes the resend), an `unsafe` one only with a settle window.
 */
export function defaultResendWhenAbsent(kind: ToolKind, hasSettleWindow: boolean): boolean {
  const policy = toolKindPolicy(kind);
  return policy.remoteDedupesKey || (policy.remoteIgnoresKey && hasSettleWindow);
}
