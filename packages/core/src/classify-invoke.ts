/**
 * Classification of a whole `invoke`'s failure (DESIGN.md rule 11; issue 9 §3): what its last error
 * says, weighed against what the invoke wrote (invoke-tracker.ts).
 */
import {
  AMBIGUOUS_CODES,
  type Classification,
  type ClassifyOptions,
  classifyError,
  describe,
  judgeLink,
  links,
  NOT_SENT_CODES,
  stringField,
  typedClassification,
} from "./classify/index.ts";
import { isRejectedError } from "./errors.ts";
import { classifyHttpStatus } from "./http-status.ts";
import type { RepeatSummary } from "./repeat-guard.ts";

/**
 * What `invokeTracked` (invoke-tracker.ts) saw of one failed `invoke`: its error and whether any
 * request of the whole invoke was written. A failed `InvokeAttempt` fits as is.
 * - `written`: a request of the invoke had its head written (or may still be).
 * - `writtenRequests`: how many requests that was; absent = unknown (then a refusal is not trusted).
 * - `ioStarted`: any HTTP request or TCP socket was started in the invoke's async context.
 * - `repeats`: repeats of one unsafe request within the invoke (repeat-guard.ts); absent = none seen.
 */
export interface InvokeFailureEvidence {
  ok?: false;
  error: unknown;
  written: boolean;
  ioStarted: boolean;
  writtenRequests?: number;
  repeats?: RepeatSummary;
}

/** JavaScript's built-in programming errors: thrown by code, never by the network. */
const PROGRAMMING_ERROR_NAMES: ReadonlySet<string> = new Set([
  "TypeError",
  "RangeError",
  "ReferenceError",
  "SyntaxError",
]);

/** Node's own error codes on programming errors (`ERR_INVALID_ARG_TYPE`, `ERR_INVALID_URL`, …). */
const NODE_INTERNAL_CODE = /^ERR_[A-Z0-9_]+$/;

function isErrorObject(value: unknown): value is Record<PropertyKey, unknown> {
  return value instanceof Error || Object.prototype.toString.call(value) === "[object Error]";
}

/** A built-in programming error (also from another realm) or a ZodError-like validation error. */
function isCodeError(link: unknown): boolean {
  if (!isErrorObject(link)) return false;
  const builtin =
    link instanceof TypeError ||
    link instanceof RangeError ||
    link instanceof ReferenceError ||
    link instanceof SyntaxError ||
    PROGRAMMING_ERROR_NAMES.has(stringField(link, "name") ?? "");
  const zod = (link.name === "ZodError" || link.name === "$ZodError") && Array.isArray(link.issues);
  if (!builtin && !zod) return false;
  const code = stringField(link, "code");
  return (
    code === undefined || (NODE_INTERNAL_CODE.test(code) && !AMBIGUOUS_CODES.has(code) && !NOT_SENT_CODES.has(code))
  );
}

/**
 * True when `error` is the tool's own code failing — a TypeError, RangeError, ReferenceError or
 * SyntaxError, or a ZodError-like validation error — and nothing along its `cause` chain looks like
 * a transport failure (undici's `TypeError: fetch failed` carries ECONNREFUSED in its cause: no).
 * Tristate's typed errors are never code errors.
 */
function isToolCodeError(error: unknown): boolean {
  if (typedClassification(error) !== undefined || !isCodeError(error)) return false;
  return links(error)
    .slice(1)
    .every((link) => isCodeError(link) || judgeLink(link, {}).kind === "opaque");
}

/** Whether the classification is the remote's own refusal: a RejectedError or an HTTP status. */
function isRefusalAnswer(error: unknown, c: Classification): boolean {
  return c.httpStatus !== undefined || links(error).some((link) => isRejectedError(link));
}

/**
 * Classifies a failed tool `invoke` from its error **and** what the whole invoke wrote (DESIGN.md
 * rule 11; issue 9 §3: "was anything written?" covers every request of the invoke, not its last
 * attempt).
 *
 * Rules, in order:
 * 0. Repeats, for an invoke that refuses them ({@link classifyRepeats}): a repeat written → UNKNOWN
 *    `REPEATED_WRITE` for a person; a repeat refused → the verdict of the one written request's answer.
 * 1. Provably nothing sent: `ioStarted` and `written` are false and the error is the tool's own code
 *    failing — a built-in TypeError/RangeError/ReferenceError/SyntaxError or a ZodError-like
 *    validation error, with no transport error in its `cause` chain (never a Tristate typed error)
 *    → FAILED_NO_EFFECT `TOOL_ERROR_NOT_SENT`, the message naming the error.
 * 2. Otherwise {@link classifyError} (which already makes a client's own retry count UNKNOWN); a
 *    connection-level "not sent" (ECONNREFUSED…) that the tracker never saw any I/O for is UNKNOWN:
 *    the client works outside the invoke's async context (a shared queue or pool), so its earlier
 *    attempts are out of sight too.
 * 3. If anything was written in the invoke, the outcome is never FAILED_NO_EFFECT: a not-sent,
 *    deadline or rejected verdict becomes UNKNOWN `AMBIGUOUS`, the message saying that an earlier
 *    request of the same invoke was written. Exception: the remote's refusal (a RejectedError, or
 *    an HTTP status the rules call rejected) stands when exactly one request was written — the
 *    refused one; with two or more (or an unknown count), an earlier one may have taken effect.
 *
 * Never throws.
 * @param attempt the failed attempt: `error`, `written`, `ioStarted`, `writtenRequests`.
 * @param options per-tool overrides (`noEffectStatuses`) passed to {@link classifyError}.
 * @returns the outcome, reason code and message (and `httpStatus`/`retryAfterMs` when known).
 */
export function classifyInvokeFailure(attempt: InvokeFailureEvidence, options: ClassifyOptions = {}): Classification {
  const repeated = classifyRepeats(attempt, options, false);
  if (repeated !== undefined) return repeated;
  const { error } = attempt;
  if (!attempt.ioStarted && !attempt.written && isToolCodeError(error)) {
    return {
      outcome: "FAILED_NO_EFFECT",
      code: "TOOL_ERROR_NOT_SENT",
      message: `the tool's code threw ${describe(error)} before starting any request; nothing was sent (rule 11, docs/rules.md)`,
    };
  }
  const c = classifyError(error, options);
  if (c.outcome === "FAILED_NO_EFFECT" && c.code === "NOT_SENT" && !attempt.ioStarted && !typedClassification(error)) {
    // A refused connection the tracker never saw: the client made its requests outside this invoke's
    // async context (a shared queue or pool), so its earlier attempts are out of sight too.
    return {
      outcome: "UNKNOWN",
      code: "AMBIGUOUS",
      message: `${c.message}; but the invoke's tracker saw none of its requests (a pooled or queued client), so an earlier attempt may have been written`,
    };
  }
  if (c.outcome !== "FAILED_NO_EFFECT" || !attempt.written) return c;
  if (isRefusalAnswer(error, c) && attempt.writtenRequests === 1) return c;
  const unknown: Classification = {
    outcome: "UNKNOWN",
    code: "AMBIGUOUS",
    message: `${c.message}; but an earlier request of the same invoke was written and may have taken effect (rule 11, docs/rules.md)`,
  };
  if (c.httpStatus !== undefined) unknown.httpStatus = c.httpStatus;
  return unknown;
}

/**
 * The outcome of an invoke whose client repeated a written request, for an invoke that refuses
 * repeats (its tool's remote does not dedupe a key; issue 21 §2, DESIGN.md rule 11), else undefined.
 * - A repeat was written (it could not be refused: a node:http request on a reused keep-alive socket,
 *   a request the tracker could not stop) → UNKNOWN `REPEATED_WRITE`: possibly more than one effect,
 *   whatever the last answer said; every attempt in the message. No probe can count effects: a person.
 * - Only refused repeats: the one written request's answer decides, as if the client had not retried
 *   — its HTTP status through `classifyHttpStatus` (a refusal stands only when it was the invoke's one
 *   written request, and never when the invoke returned anyway: `returned`). No answer: undefined
 *   (the invoke's error decides, as before; a returned invoke is UNKNOWN `AMBIGUOUS`).
 * Never throws.
 * @param attempt what the invoke tracker saw (`repeats`, `writtenRequests`).
 * @param options per-tool overrides (`noEffectStatuses`) for the written request's status.
 * @param returned true when the invoke returned a value despite a refused repeat (then never FAILED_NO_EFFECT).
 */
export function classifyRepeats(
  attempt: Pick<InvokeFailureEvidence, "repeats" | "writtenRequests">,
  options: ClassifyOptions,
  returned: boolean,
): Classification | undefined {
  const r = attempt.repeats;
  if (r === undefined || !r.guarded || (r.written === 0 && r.refused === 0)) return undefined;
  if (r.written > 0) {
    return {
      outcome: "UNKNOWN",
      code: "REPEATED_WRITE",
      message:
        `possibly more than one effect: the tool's client wrote the same request ${r.written + 1} times in one ` +
        `invoke (its own retries) and the remote does not dedupe a key; a person decides. Attempts: ${r.evidence}`,
    };
  }
  const refusal = `the client's repeat was refused before its head was written (rule 11). Attempts: ${r.evidence}`;
  const status = r.refusedTargetStatus;
  if (status === undefined) {
    // No answer to the written request: the invoke's own error (a timeout, a reset) says why, and
    // with a request written it is never FAILED_NO_EFFECT (classifyInvokeFailure's rule 3).
    if (!returned) return undefined;
    return { outcome: "UNKNOWN", code: "AMBIGUOUS", message: `the written request got no answer; ${refusal}` };
  }
  const verdict = classifyHttpStatus(status, options);
  const message = `the written request answered ${status} (${verdict.reason}); ${refusal}`;
  if (verdict.kind === "rejected" && !returned && attempt.writtenRequests === 1) {
    return { outcome: "FAILED_NO_EFFECT", code: verdict.code, message, httpStatus: status };
  }
  const code = verdict.kind === "ambiguous" ? verdict.code : "AMBIGUOUS";
  return { outcome: "UNKNOWN", code, message, httpStatus: status };
}
