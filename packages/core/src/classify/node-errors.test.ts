import { Cleanup } from "@tristate/testing";
import { afterEach, describe, expect, it } from "vitest";
import { closedOrigin, post, remote, selfSignedOrigin } from "./fixtures.ts";
import { classifyError } from "./index.ts";
import { nodeErrors } from "./node-errors.ts";

// Node's own errors, produced with node:http against loopback remotes (fixtures.ts).

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

describe(`${nodeErrors.name} adapter: real node:http errors`, () => {
  it("connection refused (closed port) → FAILED_NO_EFFECT NOT_SENT", async () => {
    const { error } = await post(`${await closedOrigin()}/charges`);
    expect(error?.code).toBe("ECONNREFUSED");
    expect(classifyError(error)).toMatchObject({ outcome: "FAILED_NO_EFFECT", code: "NOT_SENT" });
  });

  it("DNS failure (.invalid never resolves) → FAILED_NO_EFFECT NOT_SENT", async () => {
    const { error } = await post("http://nonexistent.invalid/charges");
    expect(["ENOTFOUND", "EAI_AGAIN"]).toContain(error?.code);
    expect(classifyError(error)).toMatchObject({ outcome: "FAILED_NO_EFFECT", code: "NOT_SENT" });
  });

  it("self-signed server certificate (handshake fails before any request byte) → NOT_SENT", async () => {
    const { error } = await post(`${await selfSignedOrigin(cleanup)}/charges`);
    expect(error?.code).toBe("DEPTH_ZERO_SELF_SIGNED_CERT");
    expect(classifyError(error)).toMatchObject({ outcome: "FAILED_NO_EFFECT", code: "NOT_SENT" });
  });

  it("reset after the request was written → UNKNOWN RESET_AFTER_WRITE", async () => {
    const { error } = await post(`${await remote(cleanup, "reset")}/charges`);
    expect(error?.code).toBe("ECONNRESET");
    expect(classifyError(error)).toMatchObject({ outcome: "UNKNOWN", code: "RESET_AFTER_WRITE" });
  });

  it("request aborted by a signal while the server is silent (Node's AbortError, ABORT_ERR) → UNKNOWN READ_TIMEOUT", async () => {
    const origin = await remote(cleanup, "silent");
    const controller = new AbortController();
    const pending = post(`${origin}/charges`, { signal: controller.signal });
    // Before or after the request reached the wire, the error is the same: it alone cannot tell.
    setImmediate(() => controller.abort());
    const { error } = await pending;
    expect(error?.name).toBe("AbortError");
    expect(classifyError(error)).toMatchObject({ outcome: "UNKNOWN", code: "READ_TIMEOUT" });
  });

  it("a 5xx answer is no error for node:http; the caller classifies the status (http.ts)", async () => {
    const { response, error } = await post(`${await remote(cleanup, 503)}/charges`);
    expect(error).toBeUndefined();
    expect(response?.statusCode).toBe(503);
  });
});
