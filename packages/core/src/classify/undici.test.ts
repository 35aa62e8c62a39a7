import { Cleanup } from "@tristate/testing";
import { Agent, errors, interceptors, request, fetch as undiciFetch } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { closedOrigin, rejection, remote } from "./fixtures.ts";
import { classifyError } from "./index.ts";
import { undici } from "./undici.ts";

// undici 7 (the workspace's) and Node's built-in fetch, against loopback remotes (fixtures.ts).

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const body = JSON.stringify({ amount: 100 });

function agent(options: Agent.Options = {}): Agent {
  return cleanup.add(new Agent(options), (a) => a.close());
}

describe(`${undici.name} adapter: real undici and fetch errors`, () => {
  it("fetch to a closed port: TypeError fetch failed, cause ECONNREFUSED → FAILED_NO_EFFECT NOT_SENT", async () => {
    const origin = await closedOrigin();
    const error = await rejection(fetch(`${origin}/charges`, { method: "POST", body }));
    expect(error).toMatchObject({ name: "TypeError", message: "fetch failed", cause: { code: "ECONNREFUSED" } });
    const c = classifyError(error);
    expect(c).toMatchObject({ outcome: "FAILED_NO_EFFECT", code: "NOT_SENT" });
    expect(c.message).toContain("ECONNREFUSED");
    // The reason names the remote and says nothing was sent (issue 22 §5).
    expect(c.message).toContain(`— ${new URL(origin).host} refused the connection; nothing was sent`);
  });

  it("undici's connect timeout (ConnectTimeoutError, as fetch wraps it) → FAILED_NO_EFFECT NOT_SENT", () => {
    // A connect timeout needs a black-holed address, which a test cannot count on: the real class.
    const cause = new errors.ConnectTimeoutError();
    expect(cause.code).toBe("UND_ERR_CONNECT_TIMEOUT");
    const error = new TypeError("fetch failed", { cause });
    expect(classifyError(error)).toMatchObject({ outcome: "FAILED_NO_EFFECT", code: "NOT_SENT" });
  });

  it("headers timeout after the request was sent (UND_ERR_HEADERS_TIMEOUT) → UNKNOWN READ_TIMEOUT", async () => {
    const dispatcher = agent({ headersTimeout: 100 });
    const origin = await remote(cleanup, "silent");
    const error = await rejection(request(`${origin}/charges`, { method: "POST", body, dispatcher }));
    expect(error).toMatchObject({ code: "UND_ERR_HEADERS_TIMEOUT" });
    expect(classifyError(error)).toMatchObject({ outcome: "UNKNOWN", code: "READ_TIMEOUT" });
  });

  it("body timeout after headers were received (fetch: TypeError terminated, cause UND_ERR_BODY_TIMEOUT) → UNKNOWN READ_TIMEOUT", async () => {
    const dispatcher = agent({ bodyTimeout: 100 });
    const origin = await remote(cleanup, "stall-body");
    const response = await undiciFetch(`${origin}/charges`, { method: "POST", body, dispatcher });
    expect(response.status).toBe(200);
    const error = await rejection(response.text());
    expect(error).toMatchObject({ name: "TypeError", cause: { code: "UND_ERR_BODY_TIMEOUT" } });
    expect(classifyError(error)).toMatchObject({ outcome: "UNKNOWN", code: "READ_TIMEOUT" });
  });

  it("the server closes the connection after reading the request (UND_ERR_SOCKET other side closed) → UNKNOWN RESET_AFTER_WRITE", async () => {
    const origin = await remote(cleanup, "close");
    const error = await rejection(request(`${origin}/charges`, { method: "POST", body, dispatcher: agent() }));
    expect(error).toMatchObject({ code: "UND_ERR_SOCKET" });
    expect(classifyError(error)).toMatchObject({ outcome: "UNKNOWN", code: "RESET_AFTER_WRITE" });
  });

  it("the server resets the connection after reading the request (fetch, cause ECONNRESET) → UNKNOWN RESET_AFTER_WRITE", async () => {
    const origin = await remote(cleanup, "reset");
    const error = await rejection(fetch(`${origin}/charges`, { method: "POST", body }));
    expect(error).toMatchObject({ message: "fetch failed", cause: { code: "ECONNRESET" } });
    expect(classifyError(error)).toMatchObject({ outcome: "UNKNOWN", code: "RESET_AFTER_WRITE" });
  });

  it("fetch aborted by AbortSignal.timeout while the server is silent (DOMException TimeoutError) → UNKNOWN READ_TIMEOUT", async () => {
    const origin = await remote(cleanup, "silent");
    const error = await rejection(
      fetch(`${origin}/charges`, { method: "POST", body, signal: AbortSignal.timeout(100) }),
    );
    expect(error).toMatchObject({ name: "TimeoutError" });
    expect(classifyError(error)).toMatchObject({ outcome: "UNKNOWN", code: "READ_TIMEOUT" });
  });

  it("fetch aborted by AbortController (DOMException AbortError) → UNKNOWN READ_TIMEOUT", async () => {
    const origin = await remote(cleanup, "silent");
    const controller = new AbortController();
    const pending = rejection(fetch(`${origin}/charges`, { method: "POST", body, signal: controller.signal }));
    controller.abort();
    expect(await pending).toMatchObject({ name: "AbortError" });
    expect(classifyError(await pending)).toMatchObject({ outcome: "UNKNOWN", code: "READ_TIMEOUT" });
  });

  it("a 503 answer through the responseError interceptor (ResponseError, UND_ERR_RESPONSE) → UNKNOWN", async () => {
    const dispatcher = cleanup.add(new Agent().compose(interceptors.responseError()), (d) => d.close());
    const origin = await remote(cleanup, 503);
    const error = await rejection(request(`${origin}/charges`, { method: "POST", body, dispatcher }));
    expect(error).toMatchObject({ code: "UND_ERR_RESPONSE", statusCode: 503 });
    // The adapter reads no `statusCode` of undici's ResponseError: its unrecognised code is UNKNOWN
    // `AMBIGUOUS` (a 4xx through this interceptor is UNKNOWN too; fetch answers are classified by
    // status in http.ts instead).
    expect(classifyError(error)).toMatchObject({ outcome: "UNKNOWN", code: "AMBIGUOUS" });
  });
});
