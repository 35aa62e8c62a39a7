import type http from "node:http";
import { Cleanup } from "@tristate/testing";
import { afterEach, describe, expect, it } from "vitest";
import { axios } from "./axios.ts";
import { closedOrigin, post, remote } from "./fixtures.ts";
import { classifyError } from "./index.ts";

// axios is not installed in this workspace (no new dependency for a test): its error is rebuilt
// from its source, wrapped around the real Node errors and responses of a node:http request
// (axios's Node adapter is node:http underneath).

/**
 * axios v1 `lib/core/AxiosError.js`, the parts a classifier can see: `name` "AxiosError",
 * `isAxiosError`, `code`, `config`, `request`, `response` and `status`; `from` keeps the wrapped
 * error as non-enumerable `cause`, copies its `code` and its `name`.
 */
class AxiosErrorShape extends Error {
  isAxiosError = true;
  code?: string;
  config?: Record<string, unknown>;
  request?: unknown;
  response?: { status: number; statusText: string; headers: unknown; config: unknown; request: unknown; data: unknown };
  status?: number;

  constructor(
    message: string,
    code?: string,
    config?: Record<string, unknown>,
    request?: unknown,
    response?: AxiosErrorShape["response"],
  ) {
    super(message);
    this.name = "AxiosError";
    if (code) this.code = code;
    if (config) this.config = config;
    if (request) this.request = request;
    if (response) {
      this.response = response;
      this.status = response.status;
    }
  }

  static from(
    error: Error & { code?: string },
    code: string | null,
    config: Record<string, unknown>,
    request: unknown,
  ) {
    const axiosError = new AxiosErrorShape(error.message, code ?? error.code, config, request);
    Object.defineProperty(axiosError, "cause", { value: error, writable: true, enumerable: false, configurable: true });
    axiosError.name = error.name;
    return axiosError;
  }
}

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const config = (extra: Record<string, unknown> = {}) => ({ method: "post", timeout: 100, ...extra });

/** axios `lib/core/settle.js`: a non-2xx answer rejects with ERR_BAD_REQUEST (4xx) or ERR_BAD_RESPONSE. */
function settle(res: http.IncomingMessage & { body: string }, request: unknown, cfg: Record<string, unknown>) {
  const status = res.statusCode ?? 0;
  const response = {
    status,
    statusText: res.statusMessage ?? "",
    headers: res.headers,
    config: cfg,
    request,
    data: res.body,
  };
  const code = Math.floor(status / 100) === 4 ? "ERR_BAD_REQUEST" : "ERR_BAD_RESPONSE";
  return new AxiosErrorShape(`Request failed with status code ${status}`, code, cfg, request, response);
}

describe(`${axios.name} adapter: axios errors around real node:http outcomes`, () => {
  it("connection refused (AxiosError.from the Node error: code copied, cause kept) → FAILED_NO_EFFECT NOT_SENT", async () => {
    const { request, error } = await post(`${await closedOrigin()}/charges`);
    if (!error) throw new Error("expected a refused connection");
    const axiosError = AxiosErrorShape.from(error, null, config(), request);
    expect(axiosError).toMatchObject({ isAxiosError: true, code: "ECONNREFUSED", cause: { code: "ECONNREFUSED" } });
    expect(classifyError(axiosError)).toMatchObject({ outcome: "FAILED_NO_EFFECT", code: "NOT_SENT" });
  });

  it("read timeout after the request was sent (lib/adapters/http.js: ECONNABORTED) → UNKNOWN READ_TIMEOUT", async () => {
    const origin = await remote(cleanup, "silent");
    const cfg = config();
    let timeout: AxiosErrorShape | undefined;
    const { error } = await post(`${origin}/charges`, {
      timeoutMs: 100,
      onTimeout: () => {
        timeout = new AxiosErrorShape("timeout of 100ms exceeded", "ECONNABORTED", cfg);
        return timeout;
      },
    });
    expect(error).toBe(timeout);
    expect(classifyError(error)).toMatchObject({ outcome: "UNKNOWN", code: "READ_TIMEOUT" });
    // transitional.clarifyTimeoutError: the same timeout spelled ETIMEDOUT (Node's code).
    const clarified = new AxiosErrorShape("timeout of 100ms exceeded", "ETIMEDOUT", cfg);
    expect(classifyError(clarified)).toMatchObject({ outcome: "UNKNOWN", code: "READ_TIMEOUT" });
  });

  it("reset after the request was written (AxiosError.from ECONNRESET) → UNKNOWN RESET_AFTER_WRITE", async () => {
    const { request, error } = await post(`${await remote(cleanup, "reset")}/charges`);
    if (!error) throw new Error("expected a reset");
    const axiosError = AxiosErrorShape.from(error, null, config(), request);
    expect(classifyError(axiosError)).toMatchObject({ outcome: "UNKNOWN", code: "RESET_AFTER_WRITE" });
  });

  it("a 503 answer (settle: ERR_BAD_RESPONSE with response.status) → UNKNOWN GATEWAY_5XX, httpStatus 503", async () => {
    const cfg = config();
    const { request, response } = await post(`${await remote(cleanup, 503)}/charges`);
    if (!response) throw new Error("expected an answer");
    const error = settle(response, request, cfg);
    expect(classifyError(error)).toMatchObject({ outcome: "UNKNOWN", code: "GATEWAY_5XX", httpStatus: 503 });
  });

  it("a 422 answer (settle: ERR_BAD_REQUEST) → FAILED_NO_EFFECT REJECTED; after axios-retry retried → UNKNOWN", async () => {
    const { request, response } = await post(`${await remote(cleanup, 422)}/charges`);
    if (!response) throw new Error("expected an answer");
    const first = settle(response, request, config({ "axios-retry": { retryCount: 0 } }));
    expect(classifyError(first)).toMatchObject({ outcome: "FAILED_NO_EFFECT", code: "REJECTED", httpStatus: 422 });
    // axios-retry `src/index.ts`: its state lives in config["axios-retry"], retryCount counts retries made.
    const retried = settle(response, request, config({ "axios-retry": { retries: 3, retryCount: 2 } }));
    const c = classifyError(retried);
    expect(c).toMatchObject({ outcome: "UNKNOWN", code: "AMBIGUOUS", httpStatus: 422 });
    expect(c.message).toContain("axios-retry retried 2 time(s)");
  });

  it("the browser adapter's network error (lib/adapters/xhr.js: ERR_NETWORK, no detail) → UNKNOWN AMBIGUOUS", () => {
    const error = new AxiosErrorShape("Network Error", "ERR_NETWORK", config(), {});
    expect(classifyError(error)).toMatchObject({ outcome: "UNKNOWN", code: "AMBIGUOUS" });
  });
});
