/**
 * `callHttp`: the transport for tools that call an HTTP remote. One attempt, never a retry; errors
 * come out already classified as `NotSentError`, `RejectedError` or `AmbiguousError` (DESIGN.md
 * "Error mapping"; field cases T07, T09, T11).
 */
import { Agent, type Dispatcher, RetryAgent, request as undiciRequest } from "undici";
import { classifyError } from "./classify/index.ts";
import type { Deadline } from "./deadline.ts";
import { AmbiguousError, NotSentError, RejectedError } from "./errors.ts";
import { encodeBody, flattenHeaders, parseBody } from "./http-body.ts";
import { type SendTracker, trackCall } from "./http-sent.ts";
import { classifyHttpStatus, type HttpStatusVerdict, parseRetryAfterMs } from "./http-status.ts";
import type { ReasonCode } from "./statuses.ts";

/** Header carrying the executor's idempotency key (IETF draft-ietf-httpapi-idempotency-key-header). */
export const IDEMPOTENCY_KEY_HEADER = "Idempotency-Key";

/**
 * Header carrying the turn's deadline to the remote, as an absolute epoch-ms integer (e.g.
 * `Request-Deadline: 1767225600000`). There is no standard HTTP header for this; Tristate forwards
 * an absolute time (not a relative timeout) so queueing in proxies cannot extend it. A remote that
 * honours it should refuse (4xx) work it cannot finish before that instant. Clock skew between the
 * hosts applies.
 */
export const REQUEST_DEADLINE_HEADER = "Request-Deadline";

/**
 * What {@link callHttp} needs from its caller. An `InvokeContext` or a `ProbeContext` (tool.ts) fits.
 */
export interface HttpCallContext {
  /** Aborts the call. Before the request head was written: NotSent `DEADLINE_EXCEEDED`; after: Ambiguous `READ_TIMEOUT`. */
  signal?: AbortSignal;
  /** Whole-call timeout in ms (connect, send, headers and body). Same consequences as `signal`. */
  timeoutMs?: number;
  /** Sent as `Idempotency-Key`; a request header can never replace it (field case T11). */
  idempotencyKey?: string;
  /**
   * The client reference of a probe. Not sent by the transport (a probe puts it in its URL or body);
   * accepted so a `ProbeContext` fits.
   */
  clientRef?: string;
  /**
   * The turn's deadline. Forwarded as {@link REQUEST_DEADLINE_HEADER} (epoch ms) and caps the call's
   * timeout. Already past → NotSent `DEADLINE_EXCEEDED` without sending.
   */
  deadline?: Deadline | { epochMs: number };
}

/** One HTTP request for {@link callHttp}. */
export interface HttpRequest {
  /** HTTP method, e.g. `POST` (upper-cased before sending). */
  method: string;
  /** Absolute `http:` or `https:` URL. */
  url: string | URL;
  /** Request headers. `Idempotency-Key` and `Request-Deadline` from the context take precedence. */
  headers?: Record<string, string>;
  /**
   * Body: a string or bytes are sent as is; any other value is sent as JSON (with
   * `content-type: application/json` unless a content type is given). `undefined` sends no body.
   */
  body?: unknown;
  /** Per-tool override: statuses the remote documents as "refused before work" (see `classifyHttpStatus`). */
  noEffectStatuses?: number[];
  /**
   * How to treat `207 Multi-Status` (RFC 4918 §13: one status per item; some items may have taken
   * effect and others not). Default (absent): never a plain success — thrown as an AmbiguousError
   * `PARTIAL_EFFECT` carrying the parsed body. `"read"`: the 207 is returned like a 2xx, and the
   * caller interprets the per-item statuses in `body` itself.
   */
  multiStatus?: "read";
  /**
   * An undici dispatcher to use instead of the module's keep-alive `Agent`. It must not retry (no
   * `RetryAgent` — refused with NotSent `INVALID_ARGUMENTS` — nor retry interceptor): callHttp never
   * resends, and a hidden resend defeats it (T07).
   */
  dispatcher?: Dispatcher;
}

/** A 2xx answer, read in full. */
export interface HttpResponse {
  /** HTTP status (200–299; 207 only with `multiStatus: "read"`). */
  status: number;
  /** Response headers, lower-cased names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  /**
   * Parsed JSON when the content type is JSON (`application/json`, `*+json`) and the body parses;
   * text otherwise; `undefined` for 204, HEAD or an empty body.
   */
  body: unknown;
}

/**
 * The module's transport: keep-alive, no retries (undici never retries on its own; it has no retry
 * unless a `RetryAgent`/retry interceptor is added), HTTP/1.1, undici's default connect (10 s),
 * headers (300 s) and body (300 s) timeouts as a backstop behind `timeoutMs`.
 */
const defaultAgent = new Agent({ keepAliveTimeout: 4_000 });

/** Largest delay `setTimeout` accepts, ms. */
const MAX_TIMER_MS = 2_147_483_647;

class CallAborted extends Error {
  override readonly name = "CallAborted";
}

function notSent(message: string, code: ReasonCode, cause?: unknown): NotSentError {
  return new NotSentError(message, { code, cause });
}

function remainingOf(deadline: Deadline | { epochMs: number }): number {
  return "remainingMs" in deadline && typeof deadline.remainingMs === "function"
    ? deadline.remainingMs()
    : deadline.epochMs - Date.now();
}

function buildHeaders(
  ctx: HttpCallContext,
  request: HttpRequest,
  json: boolean,
  deadlineEpochMs: number | undefined,
): Record<string, string> {
  const headers: Record<string, string> = {};
  const names = new Map<string, string>();
  for (const [name, value] of Object.entries(request.headers ?? {})) {
    const lower = name.toLowerCase();
    if (lower === "idempotency-key" && ctx.idempotencyKey !== undefined) {
      if (value !== ctx.idempotencyKey) {
        throw notSent(
          `callHttp: the request's Idempotency-Key header differs from the executor's key; refusing to send (T11)`,
          "INVALID_ARGUMENTS",
        );
      }
      continue;
    }
    if (lower === "request-deadline" && deadlineEpochMs !== undefined) continue;
    const previous = names.get(lower);
    if (previous !== undefined) delete headers[previous];
    names.set(lower, name);
    headers[name] = value;
  }
  if (json && !names.has("content-type")) headers["content-type"] = "application/json";
  if (ctx.idempotencyKey !== undefined) headers[IDEMPOTENCY_KEY_HEADER] = ctx.idempotencyKey;
  if (deadlineEpochMs !== undefined) headers[REQUEST_DEADLINE_HEADER] = String(Math.floor(deadlineEpochMs));
  return headers;
}

/** Maps a transport error raised after the request head was written. Never NotSent. */
function afterSend(error: unknown, aborted: boolean): AmbiguousError {
  if (aborted) {
    return new AmbiguousError("callHttp: timed out or aborted after the request was sent", {
      code: "READ_TIMEOUT",
      cause: error,
    });
  }
  const c = classifyError(error);
  const code: ReasonCode = c.outcome === "UNKNOWN" ? c.code : "AMBIGUOUS";
  return new AmbiguousError(`callHttp: transport failed after the request was sent: ${c.message}`, {
    code,
    cause: error,
  });
}

/**
 * Sends one HTTP request and reads the whole answer. Never retries, and never lets the transport
 * replay the request (undici does not retry; field case T07).
 *
 * Sends `Idempotency-Key: <ctx.idempotencyKey>` when given (request headers cannot replace it:
 * field case T11) and `Request-Deadline: <epoch ms>` when `ctx.deadline` is given. The call is
 * bounded by the smaller of `ctx.timeoutMs` and the time left to `ctx.deadline`, and by `ctx.signal`.
 *
 * Whether the request reached the socket is decided from undici's `undici:client:sendHeaders`
 * diagnostics channel for this exact request (see http-sent.ts), not from error text. "Not sent" is
 * also judged for the whole invoke (DESIGN.md rule 11; issue 9 §3): when another request of the same
 * invoke — any client, any attempt, any AbortSignal, in the async context of `invokeTracked` (or,
 * outside it, under the same `ctx.signal`) — was written, a "not sent" becomes AmbiguousError.
 *
 * @param ctx signal, timeout (ms), idempotency key and deadline; an `InvokeContext` or `ProbeContext` fits.
 * @param request method, URL, headers, body, per-tool `noEffectStatuses`, `multiStatus`, optional undici dispatcher.
 * @returns the 2xx response with its body read in full.
 * @throws NotSentError before the request head was written: code `NOT_SENT` (refused, DNS, connect
 *   timeout, TLS handshake), `DEADLINE_EXCEEDED` (signal/timeout fired or deadline passed before
 *   sending) or `INVALID_ARGUMENTS` (bad URL, method, header or body).
 * @throws RejectedError for statuses `classifyHttpStatus` calls rejected (4xx except 408/409, plus
 *   `noEffectStatuses`), with `httpStatus`, the parsed `body` and `retryAfterMs` from `Retry-After`.
 * @throws AmbiguousError after the head was written: `READ_TIMEOUT` (timeout/abort, headers or body
 *   timeout), `RESET_AFTER_WRITE` (reset, socket closed, EPIPE), `AMBIGUOUS` (anything else); and for
 *   ambiguous statuses: `IN_FLIGHT` (409), `GATEWAY_5XX` (502/503/504), `PARTIAL_EFFECT` (207 without
 *   `multiStatus: "read"`; the parsed multi-status body is on the error's own `body` property),
 *   `AMBIGUOUS` (other 5xx, 408, 1xx/3xx).
 *   When the dispatcher gave no undici signal (see `HttpRequest.dispatcher`), transport errors are
 *   classified by shape with `classifyError`.
 * @throws AmbiguousError `AMBIGUOUS` (the NotSentError as its `cause`) instead of a NotSentError when
 *   another request of the same invoke was written or is still in flight (rule 11).
 */
export async function callHttp(ctx: HttpCallContext, request: HttpRequest): Promise<HttpResponse> {
  const tracker = trackCall(ctx.signal);
  try {
    return await callHttpOnce(ctx, request, tracker);
  } catch (error) {
    // Rule 11: "not sent" is judged for the whole invoke. Another request of the same invoke (an
    // SDK's earlier attempt, with its own signal or transport) may have been written (T03).
    if (error instanceof NotSentError && tracker.invokeWritten) {
      throw new AmbiguousError(
        `callHttp: this attempt was not sent, but an earlier request of the same call was (${error.message})`,
        { code: "AMBIGUOUS", cause: error },
      );
    }
    throw error;
  }
}

/**
 * Pre-flight: nothing is sent if any of this fails. `timeoutMs` is the call's bound (ms): the smaller
 * of `ctx.timeoutMs` and the time left to `ctx.deadline`.
 * @throws NotSentError `INVALID_ARGUMENTS` (URL, protocol, dispatcher, timeout, body) or
 *   `DEADLINE_EXCEEDED` (aborted, or no time left).
 */
function preflight(ctx: HttpCallContext, request: HttpRequest) {
  let url: URL;
  try {
    url = new URL(request.url);
  } catch (error) {
    throw notSent(`callHttp: invalid URL ${JSON.stringify(String(request.url))}`, "INVALID_ARGUMENTS", error);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw notSent(`callHttp: unsupported protocol ${url.protocol}`, "INVALID_ARGUMENTS");
  }
  const method = request.method.toUpperCase();
  if (request.dispatcher instanceof RetryAgent) {
    throw notSent(
      "callHttp: a RetryAgent would replay the request; pass a dispatcher that never retries",
      "INVALID_ARGUMENTS",
    );
  }

  let timeoutMs = Number.POSITIVE_INFINITY;
  if (ctx.timeoutMs !== undefined) {
    if (typeof ctx.timeoutMs !== "number" || Number.isNaN(ctx.timeoutMs)) {
      throw notSent(`callHttp: timeoutMs must be a number of ms, got ${String(ctx.timeoutMs)}`, "INVALID_ARGUMENTS");
    }
    timeoutMs = ctx.timeoutMs;
  }
  let deadlineEpochMs: number | undefined;
  if (ctx.deadline !== undefined) {
    deadlineEpochMs = ctx.deadline.epochMs;
    timeoutMs = Math.min(timeoutMs, remainingOf(ctx.deadline));
  }
  if (ctx.signal?.aborted) {
    throw notSent("callHttp: the call was aborted before sending", "DEADLINE_EXCEEDED", ctx.signal.reason);
  }
  if (timeoutMs <= 0) {
    throw notSent("callHttp: no time left before the deadline; not sent", "DEADLINE_EXCEEDED");
  }

  let encoded: ReturnType<typeof encodeBody>;
  try {
    encoded = encodeBody(request.body);
  } catch (error) {
    throw notSent("callHttp: the body cannot be encoded", "INVALID_ARGUMENTS", error);
  }
  const headers = buildHeaders(ctx, request, encoded.json, deadlineEpochMs);
  return { url, method, timeoutMs, encoded, headers };
}

async function callHttpOnce(ctx: HttpCallContext, request: HttpRequest, tracker: SendTracker): Promise<HttpResponse> {
  const { url, method, timeoutMs, encoded, headers } = preflight(ctx, request);

  // --- the attempt ---
  const controller = new AbortController();
  let aborted = false;
  let rejectEarly: ((error: unknown) => void) | undefined;
  const early = new Promise<never>((_, reject) => {
    rejectEarly = reject;
  });
  const onAbort = (reason: unknown): void => {
    if (aborted) return;
    aborted = true;
    controller.abort(reason);
    // undici records the abort on a request still waiting for a socket and drops it at
    // `request.onConnect`, before the head is written; no need to wait for the socket.
    if (tracker.correlated && !tracker.headersSent) {
      tracker.releaseUnsent();
      rejectEarly?.(notSent("callHttp: aborted or timed out before the request was sent", "DEADLINE_EXCEEDED", reason));
    }
  };
  const onCtxAbort = (): void => onAbort(ctx.signal?.reason);
  ctx.signal?.addEventListener("abort", onCtxAbort, { once: true });
  const timer = Number.isFinite(timeoutMs)
    ? setTimeout(
        () => onAbort(new CallAborted(`callHttp: timeout of ${timeoutMs} ms elapsed`)),
        Math.min(timeoutMs, MAX_TIMER_MS),
      )
    : undefined;

  try {
    let pending: Promise<Dispatcher.ResponseData>;
    try {
      pending = tracker.dispatch(() =>
        undiciRequest(url, {
          method: method as Dispatcher.HttpMethod,
          headers,
          body: encoded.payload,
          signal: controller.signal,
          dispatcher: request.dispatcher ?? defaultAgent,
        }),
      );
    } catch (error) {
      throw notSent(`callHttp: undici refused the request: ${String(error)}`, "INVALID_ARGUMENTS", error);
    }
    // `early` may win the race; keep the undici promise from becoming an unhandled rejection.
    pending.catch(() => {});

    let response: Dispatcher.ResponseData;
    try {
      response = await Promise.race([pending, early]);
    } catch (error) {
      throw beforeHeaders(error, tracker, aborted);
    }

    return await readAnswer(response, request, method, url, () => aborted);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    ctx.signal?.removeEventListener("abort", onCtxAbort);
  }
}

/**
 * Reads the whole answer and judges its status (`classifyHttpStatus`). `aborted` tells, once the
 * body is read, whether the call's timeout or signal fired.
 * @throws RejectedError, AmbiguousError as {@link callHttp} documents.
 */
async function readAnswer(
  response: Dispatcher.ResponseData,
  request: HttpRequest,
  method: string,
  url: URL,
  aborted: () => boolean,
): Promise<HttpResponse> {
  const status = response.statusCode;
  const responseHeaders = flattenHeaders(response.headers);
  const verdict: HttpStatusVerdict =
    status === 207 && request.multiStatus === "read"
      ? { kind: "ok", reason: "HTTP 207: multi-status, read by the caller (multiStatus: read)" }
      : classifyHttpStatus(status, { noEffectStatuses: request.noEffectStatuses ?? [] });
  let bytes: Buffer | undefined;
  let bodyError: unknown;
  try {
    bytes = Buffer.from(await response.body.arrayBuffer());
  } catch (error) {
    bodyError = error;
  }

  if (verdict.kind === "rejected") {
    // The remote already refused; a lost body does not change that.
    throw new RejectedError(`callHttp: ${method} ${url.origin}${url.pathname} → ${verdict.reason}`, {
      code: verdict.code,
      httpStatus: status,
      body: bytes === undefined ? undefined : parseBody(status, method, responseHeaders, bytes),
      retryAfterMs: parseRetryAfterMs(responseHeaders["retry-after"]),
    });
  }
  if (verdict.kind === "ambiguous") {
    // A 207's per-item statuses are the evidence of what took effect: keep them on the error.
    throw new AmbiguousError(`callHttp: ${method} ${url.origin}${url.pathname} → ${verdict.reason}`, {
      code: verdict.code,
      httpStatus: status,
      ...(status === 207 && bytes !== undefined ? { body: parseBody(status, method, responseHeaders, bytes) } : {}),
      retryAfterMs: parseRetryAfterMs(responseHeaders["retry-after"]),
    });
  }
  if (bytes === undefined) throw afterSend(bodyError, aborted());
  return { status, headers: responseHeaders, body: parseBody(status, method, responseHeaders, bytes) };
}

/** Maps an error raised before response headers arrived, using undici's sendHeaders signal. */
function beforeHeaders(error: unknown, tracker: SendTracker, aborted: boolean): Error {
  if (error instanceof NotSentError) return error;
  if (tracker.correlated) {
    if (!tracker.headersSent) {
      return aborted
        ? notSent("callHttp: aborted or timed out before the request was sent", "DEADLINE_EXCEEDED", error)
        : notSent(`callHttp: failed before the request was sent: ${classifyError(error).message}`, "NOT_SENT", error);
    }
    return afterSend(error, aborted);
  }
  // No undici request was created for this call (undici rejected the options), or the dispatcher
  // gives no signal: fall back to the error's shape, conservatively.
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  if (code === "UND_ERR_INVALID_ARG" || code === "UND_ERR_NOT_SUPPORTED") {
    return notSent(`callHttp: undici refused the request: ${String(error)}`, "INVALID_ARGUMENTS", error);
  }
  if (aborted) return afterSend(error, true);
  const c = classifyError(error);
  return c.outcome === "FAILED_NO_EFFECT"
    ? notSent(`callHttp: ${c.message}`, c.code, error)
    : new AmbiguousError(`callHttp: ${c.message}`, { code: c.code, cause: error });
}
