import type http from "node:http";
import { Cleanup } from "@tristate/testing";
import { afterEach, describe, expect, it } from "vitest";
import { closedOrigin, post, remote } from "./fixtures.ts";
import { got } from "./got.ts";
import { classifyError } from "./index.ts";

// got and ky are not installed in this workspace (no new dependency for a test): their errors are
// rebuilt from their sources, around the real Node errors and responses of a node:http request
// (got is node:http underneath) and a real fetch Response (ky is fetch underneath).

/** What got's `Request` exposes to its errors: `retryCount` (a retry is a new Request with + 1). */
interface GotRequestShape {
  retryCount: number;
  options: Record<string, unknown>;
  response?: unknown;
}

/**
 * got v12+ `source/core/errors.ts` `RequestError`: name "RequestError", `code` from the wrapped
 * error (else "ERR_GOT_REQUEST_ERROR"), the wrapped error as `cause`, and non-enumerable `request`,
 * `response` and `options`. Subclasses rename it and set their own code.
 */
class GotRequestError extends Error {
  code: string;
  declare readonly request: GotRequestShape;
  declare readonly response: unknown;

  constructor(message: string, error: { code?: string }, self: GotRequestShape) {
    super(message, { cause: error });
    this.name = "RequestError";
    this.code = error.code ?? "ERR_GOT_REQUEST_ERROR";
    Object.defineProperty(this, "request", { enumerable: false, value: self });
    Object.defineProperty(this, "response", { enumerable: false, value: self.response });
    Object.defineProperty(this, "options", { enumerable: false, value: self.options });
  }
}

/** got `HTTPError`: `Response code <statusCode> (<statusMessage>)`, code ERR_NON_2XX_3XX_RESPONSE. */
class GotHTTPError extends GotRequestError {
  constructor(response: http.IncomingMessage & { retryCount: number }, request: GotRequestShape) {
    super(`Response code ${response.statusCode} (${response.statusMessage})`, {}, { ...request, response });
    this.name = "HTTPError";
    this.code = "ERR_NON_2XX_3XX_RESPONSE";
  }
}

/** got `TimeoutError` around `source/core/timed-out.ts`'s error (code ETIMEDOUT, `event`). */
class GotTimeoutError extends GotRequestError {
  event: string;
  constructor(threshold: number, event: string, request: GotRequestShape) {
    super(`Timeout awaiting '${event}' for ${threshold}ms`, { code: "ETIMEDOUT" }, request);
    this.name = "TimeoutError";
    this.event = event;
  }
}

/**
 * ky `source/errors/HTTPError.ts`: name "HTTPError", `response` (a fetch Response), `request`,
 * `options`.
 */
class KyHTTPError extends Error {
  constructor(
    readonly response: Response,
    readonly request: Request,
    readonly options: Record<string, unknown>,
  ) {
    super(`Request failed with status code ${response.status}: ${response.statusText}`);
    this.name = "HTTPError";
  }
}

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const attempt = (retryCount: number): GotRequestShape => ({ retryCount, options: { method: "POST" } });

describe(`${got.name} adapter: got and ky errors around real outcomes`, () => {
  it("connection refused (RequestError, code ECONNREFUSED) → NOT_SENT; on the third attempt → UNKNOWN", async () => {
    const { error } = await post(`${await closedOrigin()}/charges`);
    if (!error) throw new Error("expected a refused connection");
    const first = new GotRequestError(error.message, error, attempt(0));
    expect(first.code).toBe("ECONNREFUSED");
    expect(classifyError(first)).toMatchObject({ outcome: "FAILED_NO_EFFECT", code: "NOT_SENT" });
    const third = new GotRequestError(error.message, error, attempt(2));
    const c = classifyError(third);
    expect(c).toMatchObject({ outcome: "UNKNOWN", code: "AMBIGUOUS" });
    expect(c.message).toContain("the client retried 2 time(s)");
  });

  it("reset after the request was written (RequestError ECONNRESET) → UNKNOWN RESET_AFTER_WRITE", async () => {
    const { error } = await post(`${await remote(cleanup, "reset")}/charges`);
    if (!error) throw new Error("expected a reset");
    const gotError = new GotRequestError(error.message, error, attempt(0));
    expect(classifyError(gotError)).toMatchObject({ outcome: "UNKNOWN", code: "RESET_AFTER_WRITE" });
  });

  it("read timeout after the request was sent (TimeoutError, event request, ETIMEDOUT) → UNKNOWN READ_TIMEOUT", async () => {
    const origin = await remote(cleanup, "silent");
    const request = attempt(0);
    const { error } = await post(`${origin}/charges`, {
      timeoutMs: 100,
      onTimeout: () => new GotTimeoutError(100, "request", request),
    });
    expect(error).toMatchObject({ name: "TimeoutError", code: "ETIMEDOUT", event: "request" });
    expect(classifyError(error)).toMatchObject({ outcome: "UNKNOWN", code: "READ_TIMEOUT" });
  });

  it("a 503 answer (HTTPError with the real IncomingMessage as response) → UNKNOWN GATEWAY_5XX, httpStatus 503", async () => {
    const { response } = await post(`${await remote(cleanup, 503)}/charges`);
    if (!response) throw new Error("expected an answer");
    const error = new GotHTTPError(Object.assign(response, { retryCount: 0 }), attempt(0));
    expect(classifyError(error)).toMatchObject({ outcome: "UNKNOWN", code: "GATEWAY_5XX", httpStatus: 503 });
  });

  it("a 400 answer → FAILED_NO_EFFECT REJECTED; the same after one retry (response.retryCount 1) → UNKNOWN", async () => {
    const { response } = await post(`${await remote(cleanup, 400)}/charges`);
    if (!response) throw new Error("expected an answer");
    const first = new GotHTTPError(Object.assign(response, { retryCount: 0 }), attempt(0));
    expect(classifyError(first)).toMatchObject({ outcome: "FAILED_NO_EFFECT", code: "REJECTED", httpStatus: 400 });
    const retried = new GotHTTPError(Object.assign(response, { retryCount: 1 }), attempt(1));
    expect(classifyError(retried)).toMatchObject({ outcome: "UNKNOWN", code: "AMBIGUOUS", httpStatus: 400 });
  });

  it("ky: HTTPError around a real fetch Response (422 → REJECTED, 504 → GATEWAY_5XX)", async () => {
    for (const [status, expected] of [
      [422, { outcome: "FAILED_NO_EFFECT", code: "REJECTED", httpStatus: 422 }],
      [504, { outcome: "UNKNOWN", code: "GATEWAY_5XX", httpStatus: 504 }],
    ] as const) {
      const request = new Request(`${await remote(cleanup, status)}/charges`, { method: "POST", body: "{}" });
      const response = await fetch(request.clone());
      await response.arrayBuffer();
      expect(classifyError(new KyHTTPError(response, request, {}))).toMatchObject(expected);
    }
  });
});
