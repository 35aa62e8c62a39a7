/**
 * Classification of transport errors and HTTP statuses into Tristate's outcomes, per DESIGN.md
 * "Error mapping: could the request have been delivered?" and field case T09 ("fetch failed" hides
 * the real cause). The rule everywhere: **when unsure, UNKNOWN** — a wrong UNKNOWN costs one probe,
 * a wrong FAILED_NO_EFFECT costs a duplicate effect.
 */
import { isAmbiguousError, isDeadlineExceededError, isNotSentError, isRejectedError } from "./errors.ts";
import { type ClassifyOptions, classifyHttpStatus } from "./http-status.ts";
import type { ReasonCode } from "./statuses.ts";

export type { ClassifyOptions };

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

/** The verdict of one link of an error chain. */
export type LinkVerdict =
  | { kind: "typed"; classification: Classification }
  | { kind: "not_sent"; code: string }
  | { kind: "ambiguous"; code: ReasonCode; label: string }
  | { kind: "opaque" };

function isObject(value: unknown): value is Record<PropertyKey, unknown> {
  return typeof value === "object" && value !== null;
}

/** `value[key]` when it is a string (classify-invoke.ts shares it). */
export function stringField(value: unknown, key: string): string | undefined {
  if (!isObject(value)) return undefined;
  const field = value[key];
  return typeof field === "string" ? field : undefined;
}

/** `Name: message` of an error-like value, for messages. */
export function describe(value: unknown): string {
  if (!isObject(value)) return String(value);
  const name = stringField(value, "name") ?? "Error";
  const message = stringField(value, "message");
  return message ? `${name}: ${message}` : name;
}

/** Collects the error, its `cause` chain and any `AggregateError.errors`, outermost first, without cycles. */
export function links(error: unknown): unknown[] {
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

/** The classification of Tristate's own typed errors (from any copy of the package), else undefined. */
export function typedClassification(error: unknown): Classification | undefined {
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

/** What one link of an error chain says about delivery (see {@link classifyError}). */
export function judgeLink(link: unknown, options: ClassifyOptions): LinkVerdict {
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
