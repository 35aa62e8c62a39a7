/**
 * `@tristate/core/internal`: the executor service's internals — no stability promise, like tRPC's
 * `unstable-core-do-not-import`. Key derivation, envelope building, confirmation tokens, operator
 * actions and options, redaction and secret masking, the text rule, probe re-runs, the sweeper's
 * pacing. `apps/executor` and `@tristate/db` use these; tool authors and embedders use
 * `@tristate/core/tools`, store implementers `@tristate/core/store`. What a name here is for is
 * said where it is defined.
 *
 * @example
 * ```ts
 * import {
 *   canonicalArguments,
 *   canonicalIdentity,
 *   createConfirmationTokens,
 *   findBadText,
 *   idempotencyKey,
 * } from "@tristate/core/internal";
 * import { canon } from "@tristate/core/tools";
 *
 * const args = { order_id: "a-1182", amount: "49.90" };
 * const spec = { order_id: canon.upper, amount: canon.decimal(2) };
 * const key = idempotencyKey("run-1", "step-3", "issue_refund", canonicalIdentity(args, spec));
 *
 * // A token confirms the call and the canonical form of every argument shown.
 * const tokens = createConfirmationTokens("a shared secret of the replicas");
 * const call = { tenant: "default", runId: "run-1", stepId: "step-3", tool: "issue_refund", idempotencyKey: key };
 * const token = tokens.issue({ ...call, args: canonicalArguments({ identity: spec }, args) }, Date.now());
 * ```
 * (`examples/internal.ts`, run by the package's tests.)
 * @module
 */

export {
  attemptKey,
  type BadText,
  buildEnvelope,
  COMPENSATE_STEP_PREFIX,
  CORRECT_STEP_PREFIX,
  type ConfirmationSubject,
  type ConfirmationTokens,
  type ConfirmationVerdict,
  type ConfirmationVerifier,
  canonicalArguments,
  canonicalIdentity,
  classifyInvokeFailure,
  createConfirmationTokens,
  DEFAULT_CONFIRMATION_TTL_MS,
  defaultResendWhenAbsent,
  type EnvelopeContext,
  findBadText,
  ID_PATTERN,
  ID_RULE_TEXT,
  type InvokeAttempt,
  type InvokeFailureEvidence,
  idempotencyKey,
  invalidArgs,
  invokeTracked,
  isCompensationStep,
  isOperatorActionError,
  LONE_SURROGATE_RULE_TEXT,
  latestChange,
  MAX_OPERATOR_NOTE_CHARS,
  maskSecret,
  NUL_RULE_TEXT,
  nextSweepLimit,
  OPERATOR_ACTION_ID_RULE,
  OPERATOR_ERROR_CODES,
  OperatorActionError,
  type OperatorActionInput,
  type OperatorActionResult,
  type OperatorActor,
  type OperatorErrorCode,
  type OperatorOptions,
  operatorOptions,
  type ProbeAnswer,
  type ProbeRerunReport,
  type ResolutionWinner,
  readPath,
  redactArgs,
  redactSecrets,
  refusalEnvelope,
  SECRET_LAST4_FROM_CHARS,
  SECRET_MASK,
  type SecretMasker,
  secretMasker,
  stateName,
  type ToolKindPolicy,
  textRuleBroken,
  toolKindPolicy,
  waitingForHuman,
} from "../index.ts";
