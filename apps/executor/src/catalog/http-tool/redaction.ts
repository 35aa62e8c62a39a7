/**
 * Keeps argument values that are not `loggableFields` out of every error a declarative tool throws
 * (DESIGN.md: stored errors hold no personal data). Errors are rebuilt with scrubbed text, keeping
 * their class, code, HTTP status and `Retry-After`, and without their `cause` chain (whose text is
 * not ours to scrub).
 */
import {
  AmbiguousError,
  classifyError,
  DeadlineExceededError,
  isAmbiguousError,
  isDeadlineExceededError,
  isNotSentError,
  isRejectedError,
  NotSentError,
  RejectedError,
  redactArgs,
} from "@tristate/core";
import type { FilledUrl } from "./url-template.ts";

/** Scrubs text and errors of one call. */
export interface Redaction {
  /** `text` with each known form of the URLs replaced by its shown form and each non-loggable value by `{field}`. */
  text(text: string): string;
  /**
   * `error` rebuilt with scrubbed text: `NotSentError`, `RejectedError` (its body scrubbed too),
   * `AmbiguousError` and `DeadlineExceededError` keep their class and fields; any other error becomes
   * the typed error of its classification (`classifyError`), so the outcome does not change.
   */
  error(error: unknown): Error;
}

/**
 * The redaction of one call.
 * @param args the call's arguments; every value of a field not in `loggable` is searched for raw,
 *   URL-encoded, form-encoded and JSON-escaped (case-insensitively; `redactArgs` from @tristate/core).
 * @param urls the URLs the call filled (see `fillUrl`), replaced first and exactly.
 * @param secret the tool's `secretFields`: their values are redacted whatever their length.
 */
export function redactionFor(
  args: Record<string, unknown>,
  loggable: ReadonlySet<string>,
  urls: FilledUrl[],
  secret: readonly string[] = [],
): Redaction {
  const pairs = urls.flatMap((u) => u.forms).sort((a, b) => b[0].length - a[0].length);
  const tool = { loggableFields: [...loggable], secretFields: [...secret] };
  const text = (input: string): string => {
    let out = input;
    for (const [sent, shown] of pairs) out = out.split(sent).join(shown);
    // Then every non-loggable value, in its raw and encoded forms: core's one redaction rule.
    return redactArgs(tool, args, out);
  };
  const deep = (value: unknown): unknown => {
    if (typeof value === "string") return text(value);
    if (Array.isArray(value)) return value.map(deep);
    if (value !== null && typeof value === "object") {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, deep(v)]));
    }
    return value;
  };
  return { text, error: (error) => rebuild(error, text, deep) };
}

function rebuild(error: unknown, text: (t: string) => string, deep: (v: unknown) => unknown): Error {
  if (isRejectedError(error)) {
    return new RejectedError(text(error.message), {
      code: error.code,
      httpStatus: error.httpStatus,
      body: deep(error.body),
      retryAfterMs: error.retryAfterMs,
    });
  }
  if (isAmbiguousError(error)) {
    // Keep what the executor acts on: a 503's Retry-After (no resend before it), a 207's items.
    return new AmbiguousError(text(error.message), {
      code: error.code,
      httpStatus: error.httpStatus,
      ...(error.body !== undefined ? { body: deep(error.body) } : {}),
      ...(error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}),
    });
  }
  if (isNotSentError(error)) return new NotSentError(text(error.message), { code: error.code });
  if (isDeadlineExceededError(error)) {
    return new DeadlineExceededError(text(error.message), {
      remainingMs: error.remainingMs,
      requiredMs: error.requiredMs,
    });
  }
  const c = classifyError(error);
  return c.outcome === "FAILED_NO_EFFECT"
    ? new NotSentError(text(c.message), { code: c.code })
    : new AmbiguousError(text(c.message), {
        code: c.code,
        httpStatus: c.httpStatus,
        ...(c.retryAfterMs !== undefined ? { retryAfterMs: c.retryAfterMs } : {}),
      });
}
