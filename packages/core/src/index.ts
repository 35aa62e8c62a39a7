/**
 * `@tristate/core`: the executor for side-effecting tool calls — deadlines, idempotency keys from
 * declared identity fields, the intent log port, reconciliation, envelopes. No I/O framework.
 */

export { UNDO_BUDGET_MS } from "./abort-undo.ts";
export { invalidArgs } from "./call-input.ts";
export { CanonicalisationError, type Canonicaliser, canon, isCanonicalisationError } from "./canon.ts";
export {
  AMBIGUOUS_CODES,
  type Classification,
  type ClassifyOptions,
  classifyError,
  NOT_SENT_CODES,
} from "./classify/index.ts";
export { classifyInvokeFailure, type InvokeFailureEvidence } from "./classify-invoke.ts";
export { type Clock, systemClock } from "./clock.ts";
export {
  COMPENSATE_STEP_PREFIX,
  CORRECT_STEP_PREFIX,
  isCompensationStep,
  parseRecordedCompensation,
  type RanCompensation,
  type RecordedCompensation,
  type RegisteredCompensation,
  recordedCompensationSchema,
} from "./compensation.ts";
export { type ConfirmationSubject, canonicalArguments } from "./confirmation-subject.ts";
export {
  type ConfirmationRefusalReason,
  type ConfirmationTokens,
  type ConfirmationVerdict,
  type ConfirmationVerifier,
  createConfirmationTokens,
  DEFAULT_CONFIRMATION_TTL_MS,
  MAX_CONFIRMATION_TOKEN_CHARS,
} from "./confirmations.ts";
export { DEFAULT_RESERVE_MS, Deadline, MIN_CALL_BUDGET_MS } from "./deadline.ts";
export {
  type FieldFault,
  InvalidArgumentsError,
  isInvalidArgumentsError,
  isToolDefinitionError,
  ToolDefinitionError,
} from "./definition-errors.ts";
export {
  buildEnvelope,
  type Envelope,
  type EnvelopeContext,
  RETRY_SAFE_PROMPT_RULE,
  refusalEnvelope,
} from "./envelope.ts";
export {
  AmbiguousError,
  DeadlineExceededError,
  isAmbiguousError,
  isDeadlineExceededError,
  isNotSentError,
  isRejectedError,
  NotSentError,
  RejectedError,
  type ToolErrorFields,
} from "./errors.ts";
export { type CallInput, createExecutor, type Executor, type ExecutorOptions } from "./executor.ts";
export {
  callHttp,
  type HttpCallContext,
  type HttpRequest,
  type HttpResponse,
  IDEMPOTENCY_KEY_HEADER,
  REQUEST_DEADLINE_HEADER,
} from "./http.ts";
export { classifyHttpStatus, type HttpStatusVerdict, parseRetryAfterMs } from "./http-status.ts";
export { attemptKey, canonicalIdentity, idempotencyKey, readPath } from "./idempotency-key.ts";
export { ID_PATTERN, ID_RULE_TEXT } from "./ids.ts";
export {
  type ClaimResult,
  INTENT_EVENT_TYPES,
  type IntentError,
  type IntentEvent,
  type IntentEventType,
  type IntentPatch,
  type IntentRecord,
  type IntentStore,
  type LeasedRecord,
  legacyDeadline,
  type NewIntentRecord,
  type PlanStep,
  type ShowableRecord,
  type ShownRecord,
  type StoredIntentEvent,
  shownRecord,
  type WriteOptions,
  wireKey,
} from "./intent-store.ts";
export { type InvokeAttempt, invokeTracked } from "./invoke-tracker.ts";
export { type JsonObject, type JsonValue, toJson } from "./json.ts";
export { MemoryIntentStore } from "./memory-intent-store.ts";
export {
  isOperatorActionError,
  latestChange,
  MAX_OPERATOR_NOTE_CHARS,
  OPERATOR_ACTION_ID_RULE,
  OPERATOR_ERROR_CODES,
  OperatorActionError,
  type OperatorActionInput,
  type OperatorActionResult,
  type OperatorActor,
  type OperatorErrorCode,
  type OperatorOptions,
  operatorOptions,
  type ResolutionWinner,
  stateName,
  waitingForHuman,
} from "./operator/index.ts";
export {
  type AuditEntry,
  isOperatorStore,
  type OperatorApplyResult,
  type OperatorChange,
  type OperatorStore,
} from "./operator-store.ts";
export {
  type FoundStateUnknown,
  foundStateUnknown,
  isFoundStateUnknown,
  isRefusedUnderKey,
  type RefusedUnderKey,
  refusedUnderKey,
} from "./probe-answer.ts";
export type { ProbeAnswer, ProbeRerunReport } from "./probe-rerun.ts";
export { redactArgs, redactSecrets } from "./redact.ts";
export {
  EMBEDDED_ABORT,
  isRunAbortedError,
  RUN_ABORT_VIAS,
  type RunAbort,
  RunAbortedError,
  type RunAbortInput,
  type RunAbortVia,
} from "./run-abort.ts";
export type { ProbeOptions } from "./runtime.ts";
export type { AbortReport, StepOutcome, StepReport } from "./saga.ts";
export { maskSecret, SECRET_LAST4_FROM_CHARS, SECRET_MASK, type SecretMasker, secretMasker } from "./secrets.ts";
export {
  COMPENSATION_KINDS,
  type CompensationKind,
  INTENT_STATUSES,
  type IntentStatus,
  isSettled,
  isUnsettled,
  OPERATOR_ACTIONS,
  type OperatorAction,
  OUTCOMES,
  type Outcome,
  REASON_CODES,
  RESOLUTIONS,
  type ReasonCode,
  type Resolution,
  STORED_RESOLUTIONS,
  type StoredResolution,
  shownResolution,
  TOOL_KINDS,
  type ToolKind,
} from "./statuses.ts";
export { storableJson, storableValue } from "./stored-json.ts";
export { type SweepLoop, type SweepLoopOptions, startSweepLoop } from "./sweep-loop.ts";
export { nextSweepLimit, type SweepOptions, type SweepReport, sweepStale } from "./sweeper.ts";
export { checkTenant, DEFAULT_TENANT, TENANT_PATTERN, TENANT_RULE_TEXT } from "./tenant.ts";
export { type BadText, findBadText, LONE_SURROGATE_RULE_TEXT, NUL_RULE_TEXT, textRuleBroken } from "./text.ts";
export {
  type AnyTool,
  type CompensationSpec,
  DEFAULT_KEY_RETENTION_MS,
  defineTool,
  type EffectRef,
  type InvokeContext,
  type ProbeContext,
  type Tool,
  type ToolSpec,
} from "./tool.ts";
export { defaultResendWhenAbsent, type ToolKindPolicy, toolKindPolicy } from "./tool-kind-policy.ts";
export { isWriteRefusedError, WriteRefusedError } from "./write-refused.ts";
