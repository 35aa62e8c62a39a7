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
} from "@tristate/core";
import type { FilledUrl } from "./url-template.ts";

/**
 * Values shorter than this many characters are not searched for in free text (a quantity of 2 would
 * turn "HTTP 200" into "HTTP {qty}00"); in URLs every non-loggable value is redacted whatever its length.
 */
export const MIN_SCRUBBED_LENGTH = 3;

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
 * @param args the call's arguments; every top-level string or number value of a field not in
 *   `loggable` is searched for raw, URL-encoded, form-encoded and JSON-escaped (case-insensitively).
 * @param urls the URLs the call filled (see `fillUrl`), replaced first and exactly.
 */
export function redactionFor(
  args: Record<string, unknown>,
  loggable: ReadonlySet<string>,
  urls: FilledUrl[],
): Redaction {
  const pairs = urls.flatMap((u) => u.forms).sort((a, b) => b[0].length - a[0].length);
  const values: [RegExp, string][] = [];
  for (const [field, value] of Object.entries(args)) {
    if (loggable.has(field) || (typeof value !== "string" && typeof value !== "number")) continue;
    const raw = String(value);
    if (raw.length < MIN_SCRUBBED_LENGTH) continue;
    const forms = [
      ...new Set([
        raw,
        encodeURIComponent(raw),
        encodeURI(raw),
        encodeURIComponent(raw).replaceAll("%20", "+"),
        JSON.stringify(raw).slice(1, -1),
      ]),
    ].sort((a, b) => b.length - a.length);
    const alternatives = forms.map((f) => f.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|");
    values.push([new RegExp(`(?<![A-Za-z0-9])(?:${alternatives})(?![A-Za-z0-9])`, "gi"), `{${field}}`]);
  }
  const text = (input: string): string => {
    let out = input;
    for (const [sent, shown] of pairs) out = out.split(sent).join(shown);
    for (const [pattern, shown] of values) out = out.replace(pattern, shown);
    return out;
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
    return new AmbiguousError(text(error.message), { code: error.code, httpStatus: error.httpStatus });
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
    : new AmbiguousError(text(c.message), { code: c.code, httpStatus: c.httpStatus });
}
