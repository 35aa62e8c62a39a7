/**
 * Classification of transport errors and HTTP statuses into Tristate's outcomes, per DESIGN.md
 * "Error mapping: could the request have been delivered?" and field case T09 ("fetch failed" hides
 * the real cause). The rule everywhere: **when unsure, UNKNOWN** — a wrong UNKNOWN costs one probe,
 * a wrong FAILED_NO_EFFECT costs a duplicate effect.
 */
import { isAmbiguousError, isDeadlineExceededError, isNotSentError, isRejectedError } from "./errors.ts";
import type { ReasonCode } from "./statuses.ts";

/**
 * What {@link classifyError} concluded about one error.
 * - `outcome`: `FAILED_NO_EFFECT` only when the request provably never reached the remote (or the
 *   remote refused before doing work); `UNKNOWN` otherwise.
 * - `code`: the closed reason code for envelopes and intent records.
 * - `message`: one human-readable line naming the error and the cause codes found.
 * - `httpStatus`: the remote's HTTP status, when the error carries one.
 * - `retryAfterMs`: the remote's `Retry-After`, in ms, when the error carries one.
 */
export interface Classification {
  outcome: "FAILED_NO_EFFECT" | "UNKNOWN";
  code: ReasonCode;
  message: string;
  httpStatus?: number;
  retryAfterMs?: number;
}

/** Options of {@link classifyError} and {@link classifyHttpStatus}. */
export interface ClassifyOptions {
  /**
   * Extra HTTP statuses the remote documents as "refused before any work" (per-tool override, e.g.
   * field case T05 declares 408 and 429). They classify as rejected (FAILED_NO_EFFECT). 2xx statuses
   * listed here are ignored.
   */
  noEffectStatuses?: readonly number[];
}

/**
 * Error codes that prove the request never left the client: the failure happened while resolving
 * the name, connecting or verifying the server's certificate during the TLS handshake, all of which
 * precede writing the first byte of the request. Source: field case T09's table.
 *
 * Deliberately absent: `ETIMEDOUT`, `EHOSTUNREACH`, `ENETUNREACH` and OpenSSL `ERR_SSL_*` alerts —
 * each can also occur on an established connection after bytes were written (a TLS 1.3 server may
 * reject a client certificate after the client already sent data), so they stay UNKNOWN.
 */
export const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "UND_ERR_CONNECT_TIMEOUT",
  // Bun's fetch spells a refused connection this way (no Node-style errno code).
  "ConnectionRefused",
  // Server certificate verification fails during the handshake, before any request byte is sent.
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_DECRYPT_CERT_SIGNATURE",
  "CERT_SIGNATURE_FAILURE",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "CERT_REVOKED",
  "INVALID_CA",
  "HOSTNAME_MISMATCH",
]);

/**
 * Error codes that mean "the request may have been delivered", with the reason code each maps to.
 * Source: field case T09's table. A reset alone cannot tell whether bytes were written, so it is
 * UNKNOWN, never NOT_SENT.
 */
export const AMBIGUOUS_CODES: ReadonlyMap<string, ReasonCode> = new Map<string, ReasonCode>([
  ["UND_ERR_HEADERS_TIMEOUT", "READ_TIMEOUT"],
  ["UND_ERR_BODY_TIMEOUT", "READ_TIMEOUT"],
  ["UND_ERR_ABORTED", "READ_TIMEOUT"],
  ["ABORT_ERR", "READ_TIMEOUT"],
  // axios: ECONNABORTED is its timeout; ETIMEDOUT with `transitional.clarifyTimeoutError`.
  ["ECONNABORTED", "READ_TIMEOUT"],
  ["ETIMEDOUT", "READ_TIMEOUT"],
  ["UND_ERR_SOCKET", "RESET_AFTER_WRITE"],
  ["ECONNRESET", "RESET_AFTER_WRITE"],
  ["EPIPE", "RESET_AFTER_WRITE"],
  // Bun's fetch: the keep-alive socket closed under the request.
  ["ConnectionClosed", "RESET_AFTER_WRITE"],
  // axios: a network error with no further detail (browser XHR shape).
  ["ERR_NETWORK", "AMBIGUOUS"],
]);

/** Bun's fetch throws this message with no `code` and no `cause` (field case T09). */
const BUN_SOCKET_CLOSED = /socket connection was closed unexpectedly/i;

/** How deep {@link classifyError} follows `cause` chains and `AggregateError.errors`. */
const MAX_LINKS = 32;

type LinkVerdict =
  | { kind: "typed"; classification: Classification }
  | { kind: "not_sent"; code: string }
  | { kind: "ambiguous"; code: ReasonCode; label: string }
  | { kind: "opaque" };

function isObject(value: unknown): value is Record<PropertyKey, unknown> {
  return typeof value === "object" && value !== null;
}

function stringField(value: unknown, key: string): string | undefined {
  if (!isObject(value)) return undefined;
  const field = value[key];
  return typeof field === "string" ? field : undefined;
}

function describe(value: unknown): string {
  if (!isObject(value)) return String(value);
  const name = stringField(value, "name") ?? "Error";
  const message = stringField(value, "message");
  return message ? `${name}: ${message}` : name;
}

/** Collects the error, its `cause` chain and any `AggregateError.errors`, outermost first, without cycles. */
function links(error: unknown): unknown[] {
  const seen = new Set<unknown>();
  const out: unknown[] = [];
  const queue: unknown[] = [error];
  while (queue.length > 0 && out.length < MAX_LINKS) {
    const link = queue.shift();
    if (link === undefined || link === null || seen.has(link)) continue;
    seen.add(link);
    out.push(link);
    if (isObject(link)) {
      if ("cause" in link) queue.push(link.cause);
      if (Array.isArray(link.errors)) queue.push(...link.errors);
    }
  }
  return out;
}

/**
 * The HTTP status an HTTP-client error carries in `error.response` (axios `AxiosError`, ky/got
 * `HTTPError`), or undefined. Other `status` fields are ignored: too many errors use the name loosely.
 */
function responseStatus(error: Record<PropertyKey, unknown>): number | undefined {
  const isHttpClientError = error.isAxiosError === true || error.name === "HTTPError";
  if (!isHttpClientError || !isObject(error.response)) return undefined;
  const status = error.response.status ?? error.response.statusCode;
  return typeof status === "number" && Number.isInteger(status) ? status : undefined;
}

function typedClassification(error: unknown): Classification | undefined {
  if (isNotSentError(error)) {
    return { outcome: "FAILED_NO_EFFECT", code: error.code, message: describe(error) };
  }
  if (isRejectedError(error)) {
    const c: Classification = { outcome: "FAILED_NO_EFFECT", code: error.code, message: describe(error) };
    if (error.httpStatus !== undefined) c.httpStatus = error.httpStatus;
    if (error.retryAfterMs !== undefined) c.retryAfterMs = error.retryAfterMs;
    return c;
  }
  if (isDeadlineExceededError(error)) {
    return { outcome: "FAILED_NO_EFFECT", code: "DEADLINE_EXCEEDED", message: describe(error) };
  }
  if (isAmbiguousError(error)) {
    const c: Classification = { outcome: "UNKNOWN", code: error.code, message: describe(error) };
    if (error.httpStatus !== undefined) c.httpStatus = error.httpStatus;
    if (error.retryAfterMs !== undefined) c.retryAfterMs = error.retryAfterMs;
    return c;
  }
  return undefined;
}

function judgeLink(link: unknown, options: ClassifyOptions): LinkVerdict {
  const typed = typedClassification(link);
  if (typed) return { kind: "typed", classification: typed };
  if (!isObject(link)) return { kind: "opaque" };

  const status = responseStatus(link);
  if (status !== undefined) {
    const verdict = classifyHttpStatus(status, options);
    const classification: Classification =
      verdict.kind === "rejected"
        ? { outcome: "FAILED_NO_EFFECT", code: verdict.code, message: describe(link), httpStatus: status }
        : verdict.kind === "ambiguous"
          ? { outcome: "UNKNOWN", code: verdict.code, message: describe(link), httpStatus: status }
          : { outcome: "UNKNOWN", code: "AMBIGUOUS", message: describe(link), httpStatus: status };
    return { kind: "typed", classification };
  }

  // `code` must be a string: DOMException's numeric legacy `code` (20 for AbortError) is no errno.
  const code = stringField(link, "code");
  if (code !== undefined) {
    if (NOT_SENT_CODES.has(code)) return { kind: "not_sent", code };
    const reason = AMBIGUOUS_CODES.get(code);
    if (reason) return { kind: "ambiguous", code: reason, label: code };
  }
  const name = stringField(link, "name");
  if (name === "AbortError" || name === "TimeoutError") return { kind: "ambiguous", code: "READ_TIMEOUT", label: name };
  const message = stringField(link, "message");
  if (message !== undefined && BUN_SOCKET_CLOSED.test(message)) {
    return { kind: "ambiguous", code: "RESET_AFTER_WRITE", label: "socket closed unexpectedly" };
  }
  if (code !== undefined) return { kind: "ambiguous", code: "AMBIGUOUS", label: code };
  return { kind: "opaque" };
}

/**
 * Classifies anything a tool's `invoke` threw: could the request have been delivered?
 *
 * Order (DESIGN.md "Error mapping"; field case T09):
 * 1. Tristate's typed errors, from any copy of the package: `NotSentError`, `RejectedError`,
 *    `DeadlineExceededError` → FAILED_NO_EFFECT with their code; `AmbiguousError` → UNKNOWN.
 * 2. The shapes real clients throw, walking `error.cause` chains (undici's `TypeError: fetch failed`
 *    hides the reason in `cause`) and `AggregateError.errors`:
 *    - {@link NOT_SENT_CODES} (ECONNREFUSED, ENOTFOUND, EAI_AGAIN, UND_ERR_CONNECT_TIMEOUT, TLS
 *      certificate failures) → FAILED_NO_EFFECT, code `NOT_SENT`;
 *    - {@link AMBIGUOUS_CODES}: UND_ERR_HEADERS_TIMEOUT/UND_ERR_BODY_TIMEOUT → UNKNOWN `READ_TIMEOUT`;
 *      UND_ERR_SOCKET/ECONNRESET/EPIPE → UNKNOWN `RESET_AFTER_WRITE`; axios ECONNABORTED → UNKNOWN
 *      `READ_TIMEOUT`, axios ERR_NETWORK → UNKNOWN `AMBIGUOUS`;
 *    - `DOMException` `AbortError`/`TimeoutError` → UNKNOWN `READ_TIMEOUT`;
 *    - Bun's message-only "The socket connection was closed unexpectedly" → UNKNOWN `RESET_AFTER_WRITE`;
 *    - an HTTP-client error carrying `response.status` (axios, ky/got `HTTPError`) → {@link classifyHttpStatus}.
 * 3. Anything else → UNKNOWN `AMBIGUOUS`: when unsure, UNKNOWN.
 * 4. Whatever the above concluded, an error that says its client already retried is never
 *    FAILED_NO_EFFECT (an earlier attempt may have been delivered; DESIGN.md rule 11, issue 9 §3):
 *    axios-retry's `error.config["axios-retry"].retryCount` > 0, got's `error.request.retryCount`
 *    (or `error.response.retryCount`) > 0, the AWS SDK v3's `error.$metadata.attempts` > 1, on any
 *    link → UNKNOWN `AMBIGUOUS` (keeping `httpStatus`).
 *
 * A chain is NOT_SENT only if some link proves it and **no** link suggests delivery or carries an
 * unrecognised string `code` (a retrying wrapper whose last cause was ECONNREFUSED may have sent
 * earlier attempts). Links with no `code` (`TypeError: fetch failed`) are transparent.
 *
 * Never throws.
 * @param error anything thrown or rejected.
 * @param options per-tool overrides (`noEffectStatuses`) used when the error carries an HTTP status.
 */
export function classifyError(error: unknown, options: ClassifyOptions = {}): Classification {
  const c = classifyShape(error, options);
  if (c.outcome !== "FAILED_NO_EFFECT") return c;
  const retried = retryEvidence(error);
  if (retried === undefined) return c;
  const unknown: Classification = {
    outcome: "UNKNOWN",
    code: "AMBIGUOUS",
    message: `${c.message}; ${retried}, so an earlier attempt may have been delivered`,
  };
  if (c.httpStatus !== undefined) unknown.httpStatus = c.httpStatus;
  return unknown;
}

function positiveCount(value: unknown, above: number): value is number {
  return typeof value === "number" && Number.isFinite(value) && value > above;
}

/**
 * What one error link says about retries its client already made, or undefined:
 * - axios-retry (v3, v4): `error.config["axios-retry"].retryCount` > 0 (it stores its state in the
 *   request config under the `axios-retry` namespace and increments `retryCount` before each retry);
 * - got (v11–v14): `error.request.retryCount` > 0 (got's `Request`; a retry creates a new `Request`
 *   with `retryCount + 1`), or `error.response.retryCount` > 0;
 * - AWS SDK for JavaScript v3 (smithy `retryMiddleware`): `error.$metadata.attempts` > 1 (set to the
 *   number of attempts made when it gives up).
 */
function retriesOf(link: unknown): string | undefined {
  if (!isObject(link)) return undefined;
  const config = link.config;
  if (isObject(config)) {
    const state = config["axios-retry"];
    if (isObject(state) && positiveCount(state.retryCount, 0)) return `axios-retry retried ${state.retryCount} time(s)`;
  }
  for (const holder of [link.request, link.response]) {
    if (isObject(holder) && positiveCount(holder.retryCount, 0))
      return `the client retried ${holder.retryCount} time(s)`;
  }
  const metadata = link.$metadata;
  if (isObject(metadata) && positiveCount(metadata.attempts, 1)) {
    return `the AWS SDK made ${metadata.attempts} attempts`;
  }
  return undefined;
}

/** The first retry statement found along the error's links (see {@link retriesOf}); never throws. */
function retryEvidence(error: unknown): string | undefined {
  for (const link of links(error)) {
    try {
      const retried = retriesOf(link);
      if (retried !== undefined) return retried;
    } catch {
      // A throwing getter proves nothing either way; the other links may still tell.
    }
  }
  return undefined;
}

function classifyShape(error: unknown, options: ClassifyOptions): Classification {
  const top = typedClassification(error);
  if (top) return top;

  const verdicts = links(error).map((link) => ({ link, verdict: judgeLink(link, options) }));
  const message = describeChain(error, verdicts);

  // Outermost typed error or HTTP status wins, unless an outer link already suggests delivery.
  for (const { verdict } of verdicts) {
    if (verdict.kind === "ambiguous") return { outcome: "UNKNOWN", code: verdict.code, message };
    if (verdict.kind === "typed") {
      const c = verdict.classification;
      if (c.outcome === "FAILED_NO_EFFECT" && verdicts.some((v) => v.verdict.kind === "ambiguous")) {
        return { outcome: "UNKNOWN", code: "AMBIGUOUS", message };
      }
      return { ...c, message: `${message} (${c.message})` };
    }
  }
  if (verdicts.some((v) => v.verdict.kind === "not_sent")) {
    return { outcome: "FAILED_NO_EFFECT", code: "NOT_SENT", message };
  }
  return { outcome: "UNKNOWN", code: "AMBIGUOUS", message };
}

function describeChain(error: unknown, verdicts: { link: unknown; verdict: LinkVerdict }[]): string {
  const codes = verdicts
    .map(({ link }) => stringField(link, "code"))
    .filter((code): code is string => code !== undefined);
  const head = error === undefined || error === null ? `non-error value ${String(error)}` : describe(error);
  return codes.length > 0 ? `${head} [${[...new Set(codes)].join(", ")}]` : head;
}

/**
 * Verdict of {@link classifyHttpStatus}.
 * - `ok`: 2xx (not 207), the remote did the work.
 * - `rejected`: the remote refused before doing work → FAILED_NO_EFFECT (code `REJECTED`).
 * - `ambiguous`: the work may have happened → UNKNOWN (code `IN_FLIGHT`, `GATEWAY_5XX`, `PARTIAL_EFFECT`
 *   for 207, or `AMBIGUOUS`).
 * `reason` is one line explaining the verdict, with its source.
 */
export type HttpStatusVerdict =
  | { kind: "ok"; reason: string }
  | { kind: "rejected"; code: "REJECTED"; reason: string }
  | { kind: "ambiguous"; code: ReasonCode; reason: string };

/**
 * Classifies an HTTP response status: did the remote do the work, refuse before doing it, or can we
 * not tell?
 *
 * Defaults (DESIGN.md "Error mapping"):
 * - 2xx → `ok` (RFC 9110 §15.3), except 207 Multi-Status → `ambiguous` `PARTIAL_EFFECT`: its body
 *   carries one status per item (RFC 4918 §13), so it is never a plain success; a caller that reads
 *   the items itself asks for that explicitly (`callHttp`'s `multiStatus: "read"`).
 * - 4xx → `rejected`: the client error class means the server did not act on the request
 *   (RFC 9110 §15.5) — 400, 401, 403, 404, 405, 410, 413, 415, 422, 429 (RFC 6585 §4) and others;
 *   except:
 *   - 408 Request Timeout → `ambiguous` `AMBIGUOUS`: the server closed a connection it did not
 *     finish reading (RFC 9110 §15.5.9), but intermediaries also emit it after forwarding;
 *   - 409 Conflict → `ambiguous` `IN_FLIGHT`: the IETF "The Idempotency-Key HTTP Header Field"
 *     draft (draft-ietf-httpapi-idempotency-key-header, §2.7) answers 409 when a request with the
 *     same key is still being processed; the original may yet complete.
 * - 5xx → `ambiguous` (RFC 9110 §15.6: the server failed, possibly after acting): 502, 503 and 504
 *   get `GATEWAY_5XX` (a proxy may have forwarded the request; field case T05: "a 504 means work had
 *   started"), others `AMBIGUOUS`.
 * - 1xx and 3xx (redirects are not followed; a 303 after a POST means the work was done) →
 *   `ambiguous` `AMBIGUOUS`.
 *
 * Per-tool override: `options.noEffectStatuses` adds statuses the remote documents as "refused
 * before work" (field case T05 declares 408 and 429); they become `rejected`.
 * @param status the HTTP status code (100–599).
 * @param options per-tool overrides.
 */
export function classifyHttpStatus(status: number, options: ClassifyOptions = {}): HttpStatusVerdict {
  if (status === 207) {
    return {
      kind: "ambiguous",
      code: "PARTIAL_EFFECT",
      reason: "HTTP 207: multi-status; each item has its own status, some may have taken effect (RFC 4918 §13)",
    };
  }
  if (status >= 200 && status <= 299) return { kind: "ok", reason: `HTTP ${status}: success (RFC 9110 §15.3)` };
  if (options.noEffectStatuses?.includes(status)) {
    return {
      kind: "rejected",
      code: "REJECTED",
      reason: `HTTP ${status}: declared by the tool as refused before work (noEffectStatuses)`,
    };
  }
  if (status === 408) {
    return {
      kind: "ambiguous",
      code: "AMBIGUOUS",
      reason: "HTTP 408: request timeout; an intermediary may have forwarded the request (RFC 9110 §15.5.9)",
    };
  }
  if (status === 409) {
    return {
      kind: "ambiguous",
      code: "IN_FLIGHT",
      reason:
        "HTTP 409: a request with this idempotency key is still in progress (draft-ietf-httpapi-idempotency-key-header)",
    };
  }
  if (status >= 400 && status <= 499) {
    return {
      kind: "rejected",
      code: "REJECTED",
      reason: `HTTP ${status}: client error, not acted on (RFC 9110 §15.5)`,
    };
  }
  if (status === 502 || status === 503 || status === 504) {
    return {
      kind: "ambiguous",
      code: "GATEWAY_5XX",
      reason: `HTTP ${status}: gateway or server failure; the origin may have started the work (RFC 9110 §15.6)`,
    };
  }
  if (status >= 500 && status <= 599) {
    return {
      kind: "ambiguous",
      code: "AMBIGUOUS",
      reason: `HTTP ${status}: server error, possibly after acting (RFC 9110 §15.6)`,
    };
  }
  return {
    kind: "ambiguous",
    code: "AMBIGUOUS",
    reason: `HTTP ${status}: not a final success; redirects are not followed (RFC 9110 §15)`,
  };
}

/**
 * Parses a `Retry-After` header (RFC 9110 §10.2.3): either delay-seconds or an HTTP-date.
 * @param value the header value, or undefined.
 * @param nowEpochMs the current time, epoch ms (for the HTTP-date form).
 * @returns the delay in ms (never negative), or undefined when absent or malformed.
 */
export function parseRetryAfterMs(value: string | undefined, nowEpochMs: number = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  if (!/[a-z]/i.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowEpochMs);
}

/**
 * What `invokeTracked` (invoke-tracker.ts) saw of one failed `invoke`: its error and whether any
 * request of the whole invoke was written. A failed `InvokeAttempt` fits as is.
 * - `written`: a request of the invoke had its head written (or may still be).
 * - `writtenRequests`: how many requests that was; absent = unknown (then a refusal is not trusted).
 * - `ioStarted`: any HTTP request or TCP socket was started in the invoke's async context.
 */
export interface InvokeFailureEvidence {
  ok?: false;
  error: unknown;
  written: boolean;
  ioStarted: boolean;
  writtenRequests?: number;
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
 * 1. Provably nothing sent: `ioStarted` and `written` are false and the error is the tool's own code
 *    failing — a built-in TypeError/RangeError/ReferenceError/SyntaxError or a ZodError-like
 *    validation error, with no transport error in its `cause` chain (never a Tristate typed error)
 *    → FAILED_NO_EFFECT `TOOL_ERROR_NOT_SENT`, the message naming the error.
 * 2. Otherwise {@link classifyError} (which already makes a client's own retry count UNKNOWN).
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
  const { error } = attempt;
  if (!attempt.ioStarted && !attempt.written && isToolCodeError(error)) {
    return {
      outcome: "FAILED_NO_EFFECT",
      code: "TOOL_ERROR_NOT_SENT",
      message: `the tool's code threw ${describe(error)} before starting any request; nothing was sent (DESIGN.md rule 11)`,
    };
  }
  const c = classifyError(error, options);
  if (c.outcome !== "FAILED_NO_EFFECT" || !attempt.written) return c;
  if (isRefusalAnswer(error, c) && attempt.writtenRequests === 1) return c;
  const unknown: Classification = {
    outcome: "UNKNOWN",
    code: "AMBIGUOUS",
    message: `${c.message}; but an earlier request of the same invoke was written and may have taken effect (DESIGN.md rule 11)`,
  };
  if (c.httpStatus !== undefined) unknown.httpStatus = c.httpStatus;
  return unknown;
}
