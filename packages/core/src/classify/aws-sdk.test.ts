import { Cleanup } from "@tristate/testing";
import { afterEach, describe, expect, it } from "vitest";
import { awsSdk } from "./aws-sdk.ts";
import { closedOrigin, post, remote } from "./fixtures.ts";
import { classifyError } from "./index.ts";

// The AWS SDK v3 is not installed in this workspace: its errors are built as its source builds
// them, around the real Node errors of a node:http request (`@smithy/node-http-handler` is
// node:http underneath). `@smithy/middleware-retry` `src/retryMiddleware.ts`, giving up:
//   if (!lastError.$metadata) lastError.$metadata = {};
//   lastError.$metadata.attempts = attempts + 1;
//   lastError.$metadata.totalRetryDelay = totalRetryDelay;
//   throw lastError;

/** What the retry middleware does to the last error when it gives up after `attempts` attempts. */
function gaveUp<E extends Error>(error: E, attempts: number): E & { $metadata: Record<string, unknown> } {
  return Object.assign(error, { $metadata: { attempts, totalRetryDelay: attempts > 1 ? 150 : 0 } });
}

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

describe(`${awsSdk.name} adapter: AWS SDK errors around real node:http outcomes`, () => {
  it("connection refused with maxAttempts 1 → NOT_SENT; after the default three attempts → UNKNOWN", async () => {
    const once = await post(`${await closedOrigin()}/`);
    if (!once.error) throw new Error("expected a refused connection");
    expect(classifyError(gaveUp(once.error, 1))).toMatchObject({ outcome: "FAILED_NO_EFFECT", code: "NOT_SENT" });

    const thrice = await post(`${await closedOrigin()}/`);
    if (!thrice.error) throw new Error("expected a refused connection");
    const c = classifyError(gaveUp(thrice.error, 3));
    expect(c).toMatchObject({ outcome: "UNKNOWN", code: "AMBIGUOUS" });
    expect(c.message).toContain("the AWS SDK made 3 attempts");
  });

  it("socket timeout after the request was sent (node-http-handler TimeoutError) → UNKNOWN READ_TIMEOUT", async () => {
    // `src/set-socket-timeout.ts`: Object.assign(new Error(`Connection timed out after ${ms} ms`), { name: "TimeoutError" })
    const origin = await remote(cleanup, "silent");
    const { error } = await post(`${origin}/`, {
      timeoutMs: 100,
      onTimeout: () => Object.assign(new Error("Connection timed out after 100 ms"), { name: "TimeoutError" }),
    });
    if (!error) throw new Error("expected a timeout");
    expect(classifyError(gaveUp(error, 1))).toMatchObject({ outcome: "UNKNOWN", code: "READ_TIMEOUT" });
  });

  it("reset after the request was written (ECONNRESET passed through) → UNKNOWN RESET_AFTER_WRITE", async () => {
    const { error } = await post(`${await remote(cleanup, "reset")}/`);
    if (!error) throw new Error("expected a reset");
    expect(classifyError(gaveUp(error, 1))).toMatchObject({ outcome: "UNKNOWN", code: "RESET_AFTER_WRITE" });
  });

  it("a service error from a 503 answer (ServiceException shape) → UNKNOWN; the adapter reads no $metadata status", async () => {
    const { response } = await post(`${await remote(cleanup, 503)}/`);
    const error = Object.assign(new Error("Service Unavailable"), {
      name: "ServiceUnavailable",
      $fault: "server",
      $metadata: { httpStatusCode: response?.statusCode, requestId: "r-1", attempts: 3, totalRetryDelay: 150 },
    });
    expect(classifyError(error)).toMatchObject({ outcome: "UNKNOWN", code: "AMBIGUOUS" });
    expect(classifyError(error).httpStatus).toBeUndefined();
  });
});
