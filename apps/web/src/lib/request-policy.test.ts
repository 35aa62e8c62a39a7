import { describe, expect, it } from "vitest";
import { CLIENT_TIMEOUT_MS, shouldRetryRead, withTimeout } from "./request-policy";

describe("request policy (review: a hanging executor kept the record page loading 30+ s)", () => {
  it("never retries a read the executor did not answer, nor a 4xx; other 5xx twice", () => {
    for (const status of [undefined, 502, 503, 504]) expect(shouldRetryRead(0, status)).toBe(false);
    expect(shouldRetryRead(0, 404)).toBe(false);
    expect(shouldRetryRead(0, 500)).toBe(true);
    expect(shouldRetryRead(1, 500)).toBe(true);
    expect(shouldRetryRead(2, 500)).toBe(false);
  });

  it("every request gets a timeout signal, within ≈10 s, and keeps the caller's own", async () => {
    expect(CLIENT_TIMEOUT_MS).toBeLessThanOrEqual(10_000);
    const fast = withTimeout({ method: "GET" }, 20);
    expect(fast.method).toBe("GET");
    expect(fast.signal?.aborted).toBe(false);
    await new Promise((r) => setTimeout(r, 60));
    expect(fast.signal?.aborted).toBe(true);
    expect((fast.signal as AbortSignal).reason.name).toBe("TimeoutError");

    const caller = new AbortController();
    const both = withTimeout({ signal: caller.signal });
    caller.abort();
    expect(both.signal?.aborted).toBe(true);
  });

  it("a hanging server is given up on (fetch rejects with TimeoutError)", async () => {
    const { createServer } = await import("node:net");
    const server = createServer(() => undefined); // accepts, never answers
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as { port: number };
    const started = Date.now();
    const error = await fetch(`http://127.0.0.1:${port}/`, withTimeout(undefined, 200)).catch((e: Error) => e);
    expect((error as Error).name).toBe("TimeoutError");
    expect(Date.now() - started).toBeLessThan(2_000);
    server.close();
  });
});
