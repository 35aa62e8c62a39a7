/**
 * `@tristate/core/tools`: for tool authors and embedders. Declare a side-effecting tool
 * (`defineTool`: its kind, identity fields, timeout, `invoke` and the probes that find a lost
 * effect), call remotes with `callHttp` (sends `Idempotency-Key` and `Request-Deadline`), throw the
 * errors that say what is known (`NotSentError`, `RejectedError`, `AmbiguousError`), and run calls
 * through an executor (`createExecutor` + `Deadline`), which answers with an {@link Envelope}:
 * SUCCEEDED, FAILED_NO_EFFECT or UNKNOWN, and whether a retry is safe.
 *
 * A store comes from `@tristate/core/store` (`MemoryIntentStore`) or `@tristate/db` (PostgreSQL).
 *
 * @example
 * ```ts
 * import { MemoryIntentStore } from "@tristate/core/store";
 * import { canon, createExecutor, Deadline, defineTool } from "@tristate/core/tools";
 * import { z } from "zod";
 *
 * const refunds = new Map<string, { id: string; amount: string }>(); // the "remote", keyed like Stripe
 * const issueRefund = defineTool({
 *   name: "issue_refund",
 *   kind: "idempotent_by_key",
 *   args: z.object({ order_id: z.string(), amount: z.number() }),
 *   identity: { order_id: canon.upper, amount: canon.decimal(2) },
 *   timeoutMs: 1_000,
 *   invoke: async (args, ctx) => {
 *     const id = `RF-${refunds.size + 1}`;
 *     if (!refunds.has(ctx.idempotencyKey)) refunds.set(ctx.idempotencyKey, { id, amount: String(args.amount) });
 *     return refunds.get(ctx.idempotencyKey);
 *   },
 *   probe: async (_args, ctx) => refunds.get(ctx.clientRef) ?? null,
 * });
 *
 * const executor = createExecutor({ store: new MemoryIntentStore(), tools: [issueRefund] });
 * const call = { runId: "run-1", stepId: "step-1", tool: "issue_refund", args: { order_id: "a-1", amount: 49.9 } };
 * const first = await executor.call({ ...call, deadline: Deadline.after(5_000) });
 * const again = await executor.call({ ...call, deadline: Deadline.after(5_000) }); // the model asks twice
 * ```
 * (`examples/tools.ts`, run by the package's tests.)
 * @module
 */

export {
  type AbortReport,
  AMBIGUOUS_CODES,
  AmbiguousError,
  type AnyTool,
  type CallInput,
  CanonicalisationError,
  type Canonicaliser,
  type Classification,
  type ClassifyOptions,
  type Clock,
  type CompensationSpec,
  callHttp,
  canon,
  classifyError,
  classifyHttpStatus,
  createExecutor,
  DEFAULT_KEY_RETENTION_MS,
  DEFAULT_RESERVE_MS,
  Deadline,
  DeadlineExceededError,
  defineTool,
  type EffectRef,
  type Envelope,
  type Executor,
  type ExecutorOptions,
  type FieldFault,
  type FoundStateUnknown,
  foundStateUnknown,
  type HttpCallContext,
  type HttpRequest,
  type HttpResponse,
  type HttpStatusVerdict,
  IDEMPOTENCY_KEY_HEADER,
  INTENT_STATUSES,
  type IntentStatus,
  InvalidArgumentsError,
  type InvokeContext,
  isAmbiguousError,
  isCanonicalisationError,
  isDeadlineExceededError,
  isInvalidArgumentsError,
  isNotSentError,
  isRefusedUnderKey,
  isRejectedError,
  isToolDefinitionError,
  type JsonObject,
  type JsonValue,
  MemoryIntentStore,
  MIN_CALL_BUDGET_MS,
  NOT_SENT_CODES,
  NotSentError,
  OUTCOMES,
  type Outcome,
  type ProbeContext,
  type ProbeOptions,
  parseRetryAfterMs,
  REASON_CODES,
  REQUEST_DEADLINE_HEADER,
  RESOLUTIONS,
  RETRY_SAFE_PROMPT_RULE,
  type ReasonCode,
  type RefusedUnderKey,
  RejectedError,
  type Resolution,
  refusedUnderKey,
  type StepOutcome,
  type StepReport,
  type SweepLoop,
  type SweepLoopOptions,
  type SweepOptions,
  type SweepReport,
  startSweepLoop,
  sweepStale,
  systemClock,
  TOOL_KINDS,
  type Tool,
  ToolDefinitionError,
  type ToolErrorFields,
  type ToolKind,
  type ToolSpec,
} from "../index.ts";
