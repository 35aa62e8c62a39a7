/**
 * One send of a claimed record: the invoke, bounded by what is left of the turn right before it
 * starts, and what came of it ({@link SendOutcome}). Used by `sendOnce` (send.ts).
 * @module
 */
import { markSending } from "./answer-by.ts";
import { parseStoredArgs } from "./call-input.ts";
import { type Classification, classifyError } from "./classify/index.ts";
import { classifyInvokeFailure, classifyRepeats } from "./classify-invoke.ts";
import type { Deadline } from "./deadline.ts";
import { isDeadlineExceededError, NotSentError } from "./errors.ts";
import { type IntentRecord, wireKey } from "./intent-store.ts";
import { type InvokeAttempt, invokeTracked } from "./invoke-tracker.ts";
import { redactArgs } from "./redact.ts";
import type { RepeatSummary } from "./repeat-guard.ts";
import type { Runtime } from "./runtime.ts";
import { timeoutSignal } from "./timeout-signal.ts";
import type { AnyTool } from "./tool.ts";
import { toolKindPolicy } from "./tool-kind-policy.ts";

/** What one invoke came to. */
export type SendOutcome =
  | { ok: true; value: unknown }
  /**
   * `evidence`: what the invoke wrote, when it ran (absent: it never ran, nothing was sent).
   * `repeated`: the invoke returned, but its client repeated the request (issue 21 §2): what that means.
   */
  | {
      ok: false;
      error: unknown;
      evidence?: Extract<InvokeAttempt<unknown>, { ok: false }>;
      repeated?: { classification: Classification; repeats: RepeatSummary };
      /** Refused right before the send (too little of the turn left): the invoke never started. */
      refusedBeforeSend?: true;
    };

/** The classification of a failed invoke (or one whose client repeated the request). */
export function classifyOutcome(outcome: Extract<SendOutcome, { ok: false }>): Classification {
  if (outcome.repeated) return outcome.repeated.classification;
  return outcome.evidence ? classifyInvokeFailure(outcome.evidence) : classifyError(outcome.error);
}

/** Every attempt of a client's own retries, for the outcome event an operator reads (issue 21 §2). */
export function attemptsOf(tool: AnyTool, record: IntentRecord, outcome: SendOutcome): { attempts?: string } {
  const repeats = outcome.ok ? undefined : (outcome.repeated?.repeats ?? outcome.evidence?.repeats);
  if (repeats === undefined || repeats.written + repeats.refused === 0) return {};
  return { attempts: redactArgs(tool, record.args, repeats.evidence) };
}

/**
 * Invokes the tool once for `record` (its current attempt's key), with the schema-parsed arguments
 * (`options.parsedArgs`, else the stored ones parsed again). Right before the send it takes what is
 * left of the turn again: with too little left it sends nothing (`NotSentError` DEADLINE_EXCEEDED).
 * Never throws for the invoke's own failures: they come back as `{ ok: false }`.
 * @param checkedTimeoutMs - the timeout the caller checked against the deadline before its own waits, ms.
 */
export async function invokeOnce(
  rt: Runtime,
  tool: AnyTool,
  record: IntentRecord,
  deadline: Deadline,
  checkedTimeoutMs: number,
  /** `parsedArgs` present (even undefined): the call's schema-parsed arguments, sent as they are. */
  options: { parsedArgs?: unknown },
): Promise<SendOutcome> {
  let args: unknown;
  try {
    args = "parsedArgs" in options ? options.parsedArgs : parseStoredArgs(tool, record.args);
  } catch (error) {
    return {
      ok: false,
      error: new NotSentError(String((error as Error).message), { code: "INVALID_ARGUMENTS", cause: error }),
    };
  }
  // What is left of the turn right before the send, after every wait of the executor's own (the
  // claim, a lock, a group-commit batch, a resend's PENDING write): nothing is sent after the deadline,
  // nor with less than the least budget a call may start with (issue 21 §1; source design's `left < 1.0`).
  let timeoutMs: number;
  try {
    timeoutMs = Math.min(checkedTimeoutMs, deadline.timeoutFor(tool.timeoutMs, rt.reserveMs, rt.minCallBudgetMs));
  } catch (error) {
    if (!isDeadlineExceededError(error)) throw error;
    const message = `not sent: the executor's own work used the turn's time (${error.message})`;
    const notSent = new NotSentError(message, { code: "DEADLINE_EXCEEDED", cause: error });
    return { ok: false, error: notSent, refusedBeforeSend: true };
  }
  markSending();
  const { signal, dispose } = timeoutSignal(timeoutMs);
  try {
    // "Was anything written?" is answered for the whole invoke, every client's retries included (rule 11).
    // A client's own retry of a written request is refused before its head is written unless the
    // remote dedupes the key the retry carries again (issue 21 §2).
    const policy = toolKindPolicy(tool.kind);
    const attempt = await invokeTracked(
      () =>
        tool.invoke(args, { idempotencyKey: wireKey(record), signal, timeoutMs, deadline, attempt: record.attempt }),
      { refuseRepeats: policy.hasEffect && !policy.remoteDedupesKey },
    );
    const repeated = attempt.ok ? classifyRepeats(attempt, {}, true) : undefined;
    if (repeated !== undefined)
      return { ok: false, error: repeated.message, repeated: { classification: repeated, repeats: attempt.repeats } };
    if (attempt.ok) return { ok: true, value: attempt.value };
    return { ok: false, error: attempt.error, evidence: attempt };
  } finally {
    dispose();
  }
}
