/**
 * tRPC 11's HTTP wire format without a transformer, over plain `fetch`: a mutation is
 * `POST <base>/trpc/<procedure>` with the input as the JSON body, a query is
 * `GET <base>/trpc/<procedure>?input=<url-encoded JSON>`; the answer is `{"result":{"data": …}}` or
 * `{"error":{"message","code","data":{"code","httpStatus","field"?,"detail"?}}}`.
 */
import { answerFailure, classifyFetchFailure } from "./classify.ts";
import { apiErrorFor, TristateTransportError } from "./errors.ts";
import { traceHeaders } from "./trace.ts";

/** How a client reaches the executor. */
export interface Transport {
  /** The executor's base URL without the API path, e.g. `http://127.0.0.1:4100`. */
  baseUrl: string;
  /** The API key sent as `Authorization: Bearer <key>`. */
  apiKey: string;
  /** The `fetch` to use (the global one by default). */
  fetch: typeof fetch;
  /** Extra headers sent with every request. */
  headers: Readonly<Record<string, string>>;
}

/** One request: which procedure, how, with what, and how long to wait for the answer. */
export interface ProcedureRequest {
  kind: "query" | "mutation";
  /** e.g. `calls.execute`. */
  procedure: string;
  /** The input (JSON-serialisable); undefined for procedures without one. */
  input: unknown;
  /** How long to wait for the whole answer, ms; then the request is aborted (UNKNOWN). */
  timeoutMs: number;
  /** The caller's signal: aborting it abandons the request (UNKNOWN once it may have been sent). */
  signal?: AbortSignal | undefined;
}

/** The longest delay `setTimeout` honours, ms (a longer one fires at once). */
const MAX_TIMER_MS = 2_147_483_647;

interface ErrorBody {
  error?: {
    message?: unknown;
    data?: { code?: unknown; httpStatus?: unknown; field?: unknown; detail?: unknown; requestId?: unknown };
  };
}

/** Seconds (or an HTTP date) of a `Retry-After` header as ms; undefined when absent or unreadable. */
function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/**
 * Calls one procedure and returns its `result.data` as is.
 * @throws TristateApiError (a subclass per status) when the executor refused the request (4xx).
 * @throws TristateTransportError when no usable answer came: `FAILED_NO_EFFECT` if nothing was sent,
 *   else `UNKNOWN` (reset, timeout, 5xx, 408, an answer that is not the API's JSON).
 */
export async function callProcedure<T>(transport: Transport, request: ProcedureRequest): Promise<T> {
  const { procedure } = request;
  const base = transport.baseUrl.replace(/\/+$/, "");
  let url = `${base}/trpc/${procedure}`;
  if (request.kind === "query" && request.input !== undefined) {
    url += `?input=${encodeURIComponent(JSON.stringify(request.input))}`;
  }
  const headers: Record<string, string> = {
    accept: "application/json",
    ...transport.headers,
    ...(await traceHeaders()),
    authorization: `Bearer ${transport.apiKey}`,
  };
  if (request.kind === "mutation") headers["content-type"] = "application/json";

  if (request.signal?.aborted) {
    // Cancelled before anything was written: provably no effect.
    throw new TristateTransportError({
      outcome: "FAILED_NO_EFFECT",
      reason: "CANCELLED_BEFORE_SEND",
      procedure,
      message: `${procedure}: cancelled by the caller before it was sent; nothing was sent`,
      cause: request.signal.reason,
    });
  }
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(
    () => {
      timedOut = true;
      controller.abort(new DOMException(`no answer within ${request.timeoutMs} ms`, "TimeoutError"));
    },
    Math.min(request.timeoutMs, MAX_TIMER_MS),
  );
  const onAbort = () => controller.abort(request.signal?.reason);
  request.signal?.addEventListener("abort", onAbort, { once: true });
  let status: number;
  let text: string;
  let retryAfter: string | null;
  let requestId: string | undefined;
  try {
    let response: Response;
    try {
      response = await transport.fetch(url, {
        method: request.kind === "mutation" ? "POST" : "GET",
        headers,
        ...(request.kind === "mutation" ? { body: JSON.stringify(request.input ?? {}) } : {}),
        signal: controller.signal,
      });
    } catch (error) {
      throw classifyFetchFailure(error, procedure, timedOut, !timedOut && request.signal?.aborted === true);
    }
    status = response.status;
    retryAfter = response.headers.get("retry-after");
    requestId = response.headers.get("x-request-id") ?? undefined;
    try {
      text = await response.text();
    } catch (error) {
      // Headers came back: the request was delivered. Whatever broke the body, the outcome is open.
      throw new TristateTransportError({
        outcome: "UNKNOWN",
        reason: timedOut ? "TIMED_OUT" : "NO_ANSWER",
        procedure,
        httpStatus: status,
        message: `${procedure}: the executor's answer was cut off; the request was delivered`,
        cause: error,
      });
    }
  } finally {
    clearTimeout(timer);
    request.signal?.removeEventListener("abort", onAbort);
  }

  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (status >= 200 && status < 300) {
    const result = (body as { result?: { data?: unknown } } | undefined)?.result;
    if (result && typeof result === "object" && "data" in result) return result.data as T;
    throw answerFailure(procedure, status, text, "BAD_ANSWER", requestId);
  }
  const error = (body as ErrorBody | undefined)?.error;
  if (status >= 400 && status < 500 && status !== 408 && error) {
    const data = error.data ?? {};
    throw apiErrorFor({
      httpStatus: status,
      code: typeof data.code === "string" ? data.code : `HTTP_${status}`,
      message: typeof error.message === "string" ? error.message : `${procedure}: refused with ${status}`,
      procedure,
      field: typeof data.field === "string" ? data.field : undefined,
      detail: data.detail,
      retryAfterMs: retryAfterMs(retryAfter),
      requestId: typeof data.requestId === "string" ? data.requestId : requestId,
    });
  }
  if (status === 408) throw answerFailure(procedure, status, text, "REQUEST_TIMEOUT", requestId);
  if (status >= 500) throw answerFailure(procedure, status, text, "SERVER_ERROR", requestId);
  throw answerFailure(procedure, status, text, "BAD_ANSWER", requestId);
}
