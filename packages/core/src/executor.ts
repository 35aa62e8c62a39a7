import { type Span, SpanStatusCode } from "@opentelemetry/api";
import { abortAwareStore, abortedRunEnvelope, undoAbortedSteps, undoIfRunAborted } from "./abort-undo.ts";
import { answerByDeadline, type CallProgress, untilAnswerTime } from "./answer-by.ts";
import { type CallInput, confirmationFor, declarePlan, invalidArgs, keyFor, zodIssue } from "./call-input.ts";
import { isCanonicalisationError } from "./canon.ts";
import { systemClock } from "./clock.ts";
import { registeredCompensation } from "./compensation.ts";
import { compensationSettled } from "./compensation-settled.ts";
import { DEFAULT_RESERVE_MS, Deadline, MIN_CALL_BUDGET_MS } from "./deadline.ts";
import { type Envelope, refusalEnvelope } from "./envelope.ts";
import { isDeadlineExceededError } from "./errors.ts";
import type { Executor, ExecutorOptions } from "./executor-api.ts";
import { onExisting, sendFirst } from "./existing-record.ts";
import { canonicalIdentity, idempotencyKey } from "./idempotency-key.ts";
import { ID_PATTERN } from "./ids.ts";
import type { IntentError } from "./intent-store.ts";
import { toJson } from "./json.ts";
import { resolveIntent } from "./operator/index.ts";
import { isOperatorStore } from "./operator-store.ts";
import { checkPolicies } from "./policies.ts";
import { rerunProbes } from "./probe-rerun.ts";
import { callReadOnly } from "./read-only.ts";
import { reconcileKey } from "./reconcile-key.ts";
import { effectPhrase } from "./record-envelope.ts";
import { event } from "./record-events.ts";
import { isRunAbortedError, type RunAbort } from "./run-abort.ts";
import { runAbortedRefusal } from "./run-abort-refusal.ts";
import type { Runtime } from "./runtime.ts";
import { abortRun, type SagaApi, undoStep } from "./saga.ts";
import { checkTenant, DEFAULT_TENANT } from "./tenant.ts";
import { findBadText } from "./text.ts";
import type { AnyTool } from "./tool.ts";
import { toolKindPolicy } from "./tool-kind-policy.ts";
import { toolMaps } from "./tool-maps.ts";
import { defaultTracer, loggableArgs } from "./tracing.ts";

export type { CallInput, Executor, ExecutorOptions };

const ID_RULE = ID_PATTERN;

/**
 * Creates an executor. Source: the source design's `call_tool` and `reconcile`; DESIGN.md's state
 * machine and rules 1–8.
 * @throws TypeError when two tools share a name or options are invalid.
 */
export function createExecutor(options: ExecutorOptions): Executor {
  const { tools, runnable } = toolMaps(options);
  const probe = {
    attempts: options.probe?.attempts ?? 3,
    spacingMs: options.probe?.spacingMs ?? 1000,
    timeoutMs: options.probe?.timeoutMs ?? 5000,
  };
  if (!Number.isInteger(probe.attempts) || probe.attempts < 1)
    throw new TypeError("createExecutor: probe.attempts must be an integer ≥ 1");
  if (!(probe.spacingMs >= 0)) throw new TypeError("createExecutor: probe.spacingMs must be ≥ 0 ms");
  if (!(probe.timeoutMs > 0)) throw new TypeError("createExecutor: probe.timeoutMs must be > 0 ms");
  const rt: Runtime = {
    store: options.store,
    tenant: checkTenant(options.store.tenant ?? DEFAULT_TENANT, "store.tenant"),
    tools: runnable,
    internalTools: new Set((options.internalTools ?? []).map((t) => t.name)),
    humanQueueNotified: options.humanQueueNotified,
    clock: options.clock ?? systemClock,
    tracer: options.tracer ?? defaultTracer(),
    probe,
    maxReconcileSweeps: options.maxReconcileSweeps ?? 5,
    durableOutcomes: options.durableOutcomes ?? false,
    backgroundOutcomes: options.backgroundOutcomes ?? false,
    onBackgroundWriteError: options.onBackgroundWriteError,
    pendingOutcomes: new Map(),
    pendingUndos: new Map(),
    pendingLateEvidence: new Map(),
    lateCalls: new Map(),
    undoIfAborted: async () => null,
    reserveMs: options.reserveMs ?? DEFAULT_RESERVE_MS,
    minCallBudgetMs: options.minCallBudgetMs ?? MIN_CALL_BUDGET_MS,
    confirmations: options.confirmations,
    humanRecheckMs: options.humanRecheckMs ?? 5 * 60_000,
  };
  if (!(rt.reserveMs >= 0)) throw new TypeError("createExecutor: reserveMs must be ≥ 0 ms");
  // Entry points that read records first let this executor's background outcome writes land, so they
  // act on what callers were told (a step answered SUCCEEDED is not taken for one still in flight).
  // Undos (rule 13) are not awaited here: they run with their own budget (up to 30 s), and an abort that
  // meets one reports its compensation in flight; `undosDone` waits for them (an outcome write may start
  // one as it lands). Late answers waiting for another attempt (rule 16) are not awaited either: they
  // may wait up to a lease.
  const landed = (pending: Map<unknown, Promise<unknown>>[]) => async () => {
    while (pending.some((m) => m.size > 0)) {
      await Promise.all(pending.flatMap((m) => [...m.values()]));
    }
  };
  const outcomesWritten = landed([rt.pendingOutcomes, rt.lateCalls]);
  // An entry with a turn's deadline waits no longer than its own answer time (issue 21 §1): another
  // run's late call stuck on the database must not hold an abort. A step whose write has not landed
  // is read as in flight, and rule 13 undoes it when it settles.
  const outcomesWrittenBy = (deadline: Deadline) =>
    untilAnswerTime(
      rt,
      deadline,
      outcomesWritten().catch(() => {}),
    );
  const saga: SagaApi = {
    call: (input) => call(rt, input),
    reconcileKey: (key, deadline) => reconcileKey(rt, key, deadline, "abort"),
  };
  // Rule 13: every write that makes a record SUCCEEDED goes through this store (and operators'
  // confirmations through `rt.undoIfAborted`): a step that settles after its run's abort is undone.
  // The write has committed: a failed read of the run's abort must not turn it into an error for the
  // caller; it is reported, and the sweeper's pass (`undoAbortedSteps`) undoes the step if it must.
  rt.undoIfAborted = (record) =>
    undoIfRunAborted(rt, saga, record).catch((error: unknown) => {
      rt.onBackgroundWriteError?.(error, record.key);
      return null;
    });
  // A compensation that settles later (a sweeper, a late answer) tells its original (compensation-settled.ts).
  rt.store = abortAwareStore(options.store, async (record) => {
    if (record.status === "SUCCEEDED") await rt.undoIfAborted(record);
    await compensationSettled(rt, record).catch((error: unknown) => rt.onBackgroundWriteError?.(error, record.key));
  });
  return {
    call: (input) => call(rt, input),
    callInternal: (input) => call(rt, input, true),
    reconcileKey: (key, deadline, trigger = "call", known) => reconcileKey(rt, key, deadline, trigger, known),
    resolve: async (input, operatorStore) => {
      const store = operatorStore ?? (isOperatorStore(rt.store) ? rt.store : null);
      if (!store)
        throw new TypeError("executor.resolve: pass an OperatorStore (the executor's store does not implement one)");
      await outcomesWritten();
      return resolveIntent(rt, store, input, saga);
    },
    rerunProbes: async (key, timeoutMs) => {
      await outcomesWritten();
      return rerunProbes(rt, key, timeoutMs);
    },
    abortRun: async (runId, deadline, by) => {
      if (deadline instanceof Deadline) await outcomesWrittenBy(deadline);
      return abortRun(rt, saga, runId, deadline, by);
    },
    undoAbortedSteps: (options) => undoAbortedSteps(rt, saga, options),
    compensate: async (key, deadline) => {
      if (deadline instanceof Deadline) await outcomesWrittenBy(deadline);
      const record = await rt.store.get(key);
      if (!record) throw new Error(`compensate: no intent record with key ${key}`);
      return undoStep(rt, saga, record, deadline);
    },
    declarePlan: (runId, steps) => declarePlan(rt, runId, steps),
    keyFor: (input) => keyFor(rt, input),
    confirmationFor: (input) => confirmationFor(rt, input),
    outcomesWritten,
    lateEvidenceWeighed: landed([rt.pendingLateEvidence]),
    undosDone: landed([rt.pendingOutcomes, rt.lateCalls, rt.pendingUndos]),
    tools,
    store: rt.store,
    tenant: rt.tenant,
    clock: rt.clock,
  };
}

/** `internal`: an internal tool may be called (`executor.callInternal`); else it is refused as not in the catalog. */
async function call(rt: Runtime, input: CallInput, internal = false): Promise<Envelope> {
  if (typeof input !== "object" || input === null) throw new TypeError("executor.call: input must be an object");
  for (const field of ["runId", "stepId", "tool"] as const) {
    if (typeof input[field] !== "string" || !ID_RULE.test(input[field])) {
      throw new TypeError(`executor.call: ${field} must be a non-empty printable string of at most 200 characters`);
    }
  }
  if (!(input.deadline instanceof Deadline))
    throw new TypeError("executor.call: deadline must be a Deadline (Deadline.after(ms) or Deadline.at(epochMs))");

  return rt.tracer.startActiveSpan(
    `execute_tool ${input.tool}`,
    {
      attributes: {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": input.tool,
        "tristate.run_id": input.runId,
        "tristate.step_id": input.stepId,
      },
    },
    async (span) => {
      const progress: CallProgress = { key: "", phrase: input.tool, readOnly: false, sent: false, record: null };
      try {
        // Answered by the deadline minus the reserve, whatever the executor's own waits do (issue 21 §1).
        const envelope = await answerByDeadline(rt, input.deadline, progress, async () => {
          const envelope = await callInSpan(rt, input, span, progress, internal);
          if (envelope.status !== "SUCCEEDED" || !rt.pendingUndos.has(envelope.idempotency_key)) return envelope;
          // It settled after its run was aborted (rule 13): the agent is told it is being reversed.
          const abort = await rt.store.getRunAbort(input.runId);
          return abort ? abortedRunEnvelope(envelope, abort) : envelope;
        });
        span.setAttributes({
          "tristate.idempotency_key": envelope.idempotency_key,
          "tristate.attempt": envelope.attempt,
          "tristate.outcome": envelope.status,
          "tristate.replayed": envelope.replayed,
          "tristate.retry_safe": envelope.retry_safe,
          ...(envelope.resolution ? { "tristate.resolution": envelope.resolution } : {}),
          ...(envelope.error ? { "error.type": envelope.error.code } : {}),
        });
        return envelope;
      } catch (error) {
        span.recordException(error as Error);
        span.setStatus({ code: SpanStatusCode.ERROR });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/** A call whose tool is in the catalog and whose arguments are valid, with its identity, key and effect phrase. */
interface ValidCall {
  tool: AnyTool;
  /** The arguments as the tool's schema parsed them. */
  args: unknown;
  identity: Record<string, string>;
  key: string;
  phrase: string;
}

/**
 * Validates and canonicalises a call before anything is written or sent: the tool must be in the
 * catalog, the arguments must pass its schema and hold no text PostgreSQL refuses, and the identity
 * fields must canonicalise. Puts the loggable arguments on the span. Returns the refusal to answer,
 * or the call with its idempotency key.
 * @throws whatever a canonicaliser throws that is not a canonicalisation error.
 */
function validateCall(rt: Runtime, input: CallInput, span: Span, internal: boolean): ValidCall | { refused: Envelope } {
  const tool = rt.tools.get(input.tool);
  if (!tool || (!internal && rt.internalTools.has(input.tool))) {
    return {
      refused: refusalEnvelope({
        key: "",
        effectPhrase: input.tool,
        error: {
          code: "UNKNOWN_TOOL",
          message: `tool: "${input.tool}" is not in the catalog`,
          field: "tool",
          rule: "must name a declared tool",
        },
        retrySafe: false,
        message: `There is no tool named "${input.tool}". Use one of: ${[...rt.tools.keys()].filter((n) => !rt.internalTools.has(n)).join(", ")}.`,
      }),
    };
  }

  // Validate and canonicalise before anything is written or sent.
  let args: unknown = input.args;
  if (tool.args) {
    const parsed = tool.args.safeParse(input.args);
    if (!parsed.success) return { refused: invalidArgs(input.tool, zodIssue(parsed.error)) };
    args = parsed.data;
  } else if (typeof args !== "object" || args === null || Array.isArray(args)) {
    return { refused: invalidArgs(input.tool, { field: "args", rule: "must be an object" }) };
  }
  // Neither the key (canonical JSON) nor PostgreSQL's jsonb takes NUL or a lone surrogate: refuse first.
  const badText = findBadText(input.args);
  if (badText) {
    const field = badText.path.length ? badText.path.join(".") : "args";
    return { refused: invalidArgs(input.tool, { field, rule: badText.rule }) };
  }
  // Argument values go on the span only for fields the tool marks loggable.
  const loggable = loggableArgs(tool, args);
  span.setAttributes({
    ...(tool.description ? { "gen_ai.tool.description": tool.description } : {}),
    ...Object.fromEntries(Object.entries(loggable).map(([field, value]) => [`tristate.arg.${field}`, value])),
  });
  let identity: Record<string, string>;
  try {
    identity = canonicalIdentity(args, tool.identity);
  } catch (error) {
    if (isCanonicalisationError(error))
      return { refused: invalidArgs(input.tool, { field: error.field, rule: error.rule }) };
    throw error;
  }
  const key = idempotencyKey(input.runId, input.stepId, tool.name, identity, rt.tenant);
  const phrase = effectPhrase(tool, tool.name, args, identity);
  return { tool, args, identity, key, phrase };
}

async function callInSpan(
  rt: Runtime,
  input: CallInput,
  span: Span,
  progress: CallProgress,
  internal: boolean,
): Promise<Envelope> {
  const traceId = span.spanContext().traceId;
  const valid = validateCall(rt, input, span, internal);
  if ("refused" in valid) return valid.refused;
  const { tool, args, identity, key, phrase } = valid;
  Object.assign(progress, { key, phrase, readOnly: !toolKindPolicy(tool.kind).hasEffect });

  if (!toolKindPolicy(tool.kind).hasEffect) return callReadOnly(rt, tool, args, key, phrase, input.deadline);

  const refused = await checkPolicies(rt, tool, {
    runId: input.runId,
    stepId: input.stepId,
    args,
    key,
    effectPhrase: phrase,
    confirmationToken: input.confirmationToken,
  });
  if (refused) return refused;

  let timeoutMs: number | null = null;
  let budgetError: IntentError | null = null;
  try {
    timeoutMs = input.deadline.timeoutFor(tool.timeoutMs, rt.reserveMs, rt.minCallBudgetMs);
  } catch (error) {
    if (!isDeadlineExceededError(error)) throw error;
    budgetError = {
      code: "DEADLINE_EXCEEDED",
      message: error.message,
      field: "deadline",
      rule: `must leave at least ${rt.minCallBudgetMs} ms after a ${rt.reserveMs} ms reserve`,
    };
  }

  let persistedArgs: ReturnType<typeof toJson>;
  try {
    // The validated input, not the schema's output: parsing it again gives what this send gets (§6).
    persistedArgs = toJson(input.args) ?? null;
  } catch {
    return invalidArgs(input.tool, { field: "args", rule: "must be JSON-serialisable" });
  }

  const callArgs = { persisted: persistedArgs, parsed: args };
  if (budgetError || timeoutMs === null) {
    // No budget to send. A recorded outcome can still be replayed; otherwise nothing is written.
    await rt.pendingOutcomes.get(key);
    const prior = await rt.store.get(key);
    if (prior) return onExisting(rt, tool, prior, key, input.deadline, null, callArgs);
    return refusalEnvelope({
      key,
      effectPhrase: phrase,
      error: budgetError ?? { code: "DEADLINE_EXCEEDED", message: "no budget" },
      retrySafe: true,
      message:
        "Not enough of this turn's time budget is left to start this action safely; nothing was sent. Try again in a new turn with a fresh deadline.",
    });
  }

  // This process's own outcome write of the key, if still in the background, lands first (rule 1).
  await rt.pendingOutcomes.get(key);
  const now = rt.clock.nowEpochMs();
  const claim = await claimUnlessAborted(
    rt,
    {
      tenant: rt.tenant,
      key,
      runId: input.runId,
      stepId: input.stepId,
      tool: tool.name,
      args: persistedArgs,
      identity,
      attempt: 1,
      leaseUntilEpochMs: input.deadline.epochMs,
      compensation: registeredCompensation(tool),
      createdAtEpochMs: now,
      traceId: /^0+$/.test(traceId) ? null : traceId,
    },
    [
      event(rt, key, "created", {
        runId: input.runId,
        stepId: input.stepId,
        tool: tool.name,
        deadlineEpochMs: input.deadline.epochMs,
      }),
    ],
    now,
  );
  if ("refused" in claim) return runAbortedRefusal(key, phrase, claim.refused);
  if (claim.claimed) return sendFirst(rt, tool, claim.record, input.deadline, timeoutMs, args);
  return onExisting(rt, tool, claim.existing, key, input.deadline, timeoutMs, callArgs);
}

/** The store's claim, with a new step of an aborted run (rule 13) as a value: `{ refused: abort }`. */
async function claimUnlessAborted(
  rt: Runtime,
  ...args: Parameters<Runtime["store"]["claim"]>
): Promise<Awaited<ReturnType<Runtime["store"]["claim"]>> | { refused: RunAbort }> {
  try {
    return await rt.store.claim(...args);
  } catch (error) {
    if (isRunAbortedError(error)) return { refused: error.abort };
    throw error;
  }
}
