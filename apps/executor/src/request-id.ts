/**
 * The request id of every HTTP answer (`X-Request-Id`): the caller's when it sent a valid one (1–200
 * printable ASCII characters), else a fresh UUID. The id is in the answer's header, in every log line
 * written while the request is served (`request_id`), on every span started for it
 * (`http.request.header.x-request-id`) and in tRPC error bodies (`error.data.requestId`).
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Context } from "@opentelemetry/api";
import type { ReadableSpan, Span, SpanProcessor } from "@opentelemetry/sdk-trace-base";

/** The header, in the lower case Node uses for incoming headers. */
export const REQUEST_ID_HEADER = "x-request-id";

/** The span attribute (OpenTelemetry semantic conventions: `http.request.header.<name>`, a string array). */
export const REQUEST_ID_ATTRIBUTE = "http.request.header.x-request-id";

/** A caller's id is kept when it is 1–200 printable ASCII characters (space to `~`). */
const VALID_ID = /^[\x20-\x7e]{1,200}$/;

const scope = new AsyncLocalStorage<string>();

/** The caller's `X-Request-Id` when valid (one value, printable ASCII, ≤ 200 characters), else a new UUID. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  const value = typeof given === "string" ? given.trim() : undefined;
  return value && VALID_ID.test(value) ? value : randomUUID();
}

/**
 * Serves a request under its id: sets `X-Request-Id` on the answer, then runs `serve` so that
 * {@link currentRequestId} returns the id in everything it starts (log lines, spans, error bodies).
 * @returns the id.
 */
export function withRequestId(req: IncomingMessage, res: ServerResponse, serve: (id: string) => void): string {
  const id = requestIdOf(req);
  res.setHeader(REQUEST_ID_HEADER, id);
  scope.run(id, () => serve(id));
  return id;
}

/** The id of the request being served here (async context), or undefined outside one. */
export function currentRequestId(): string | undefined {
  return scope.getStore();
}

/**
 * Puts the request id on every span started while a request is served (an SDK span processor; the
 * spans of a tool call: `execute_tool <tool>` and its children).
 */
export class RequestIdSpanProcessor implements SpanProcessor {
  onStart(span: Span, _parent: Context): void {
    const id = currentRequestId();
    if (id !== undefined) span.setAttribute(REQUEST_ID_ATTRIBUTE, [id]);
  }
  onEnd(_span: ReadableSpan): void {}
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}
