import { once } from "node:events";
import http from "node:http";
import net from "node:net";
import { Cleanup } from "@tristate/testing";
import { Agent, Client, RetryAgent } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { classifyError } from "./classify/index.ts";
import { classifyInvokeFailure } from "./classify-invoke.ts";
import { Deadline } from "./deadline.ts";
import { AmbiguousError, NotSentError, RejectedError } from "./errors.ts";
import { callHttp, IDEMPOTENCY_KEY_HEADER, REQUEST_DEADLINE_HEADER } from "./http.ts";
import { invokeTracked } from "./invoke-tracker.ts";

// Real loopback sockets only: node:http / node:net servers on 127.0.0.1, port 0.

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  remotePort: number | undefined;
}

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** An HTTP server whose handler gets the request with its body already read. */
async function httpServer(
  handler: (seen: Seen, req: http.IncomingMessage, res: http.ServerResponse) => void,
): Promise<{ origin: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => {
      body += chunk;
    });
    req.on("end", () => {
      const entry: Seen = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body,
        remotePort: req.socket.remotePort,
      };
      seen.push(entry);
      handler(entry, req, res);
    });
  });
  server.keepAliveTimeout = 10_000;
  cleanup.server(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as net.AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, seen };
}

/** A raw TCP server: `onRequest` runs once a full request head (and its Content-Length body) arrived. */
async function rawServer(
  onRequest: (socket: net.Socket, raw: string) => void,
): Promise<{ origin: string; raws: string[] }> {
  const raws: string[] = [];
  const server = net.createServer((socket) => {
    let buffer = "";
    socket.setEncoding("latin1");
    socket.on("error", () => {});
    socket.on("data", (chunk: string) => {
      buffer += chunk;
      const end = buffer.indexOf("\r\n\r\n");
      if (end < 0) return;
      const length = Number(/content-length: *(\d+)/i.exec(buffer.slice(0, end))?.[1] ?? 0);
      if (buffer.length < end + 4 + length) return;
      const raw = buffer.slice(0, end + 4 + length);
      buffer = buffer.slice(end + 4 + length);
      raws.push(raw);
      onRequest(socket, raw);
    });
  });
  cleanup.server(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as net.AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, raws };
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function agent(options: Agent.Options = {}): Agent {
  const a = new Agent(options);
  cleanup.add(null, () => a.destroy());
  return a;
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to fail");
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("callHttp: before the request is sent → NotSentError", () => {
  it("refused port", async () => {
    const port = await freePort();
    const error = await failure(
      callHttp({ timeoutMs: 2000 }, { method: "POST", url: `http://127.0.0.1:${port}/x`, body: {} }),
    );
    expect(error).toBeInstanceOf(NotSentError);
    expect((error as NotSentError).code).toBe("NOT_SENT");
    // Decided from undici's sendHeaders signal for this request, not from the error's shape.
    expect((error as NotSentError).message).toContain("before the request was sent");
    expect(classifyError(error).outcome).toBe("FAILED_NO_EFFECT");
  });

  it("DNS failure (.invalid never resolves)", async () => {
    const error = await failure(callHttp({ timeoutMs: 5000 }, { method: "POST", url: "http://nonexistent.invalid/" }));
    expect(error).toBeInstanceOf(NotSentError);
    expect((error as NotSentError).code).toBe("NOT_SENT");
  });

  it("TLS handshake cut by a reset: NotSent from undici's signal, although the cause says ECONNRESET", async () => {
    // By shape alone ECONNRESET is UNKNOWN; undici never published sendHeaders, so nothing was sent.
    const server = net.createServer((socket) => socket.resetAndDestroy());
    cleanup.server(server);
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as net.AddressInfo;
    const error = await failure(callHttp({ timeoutMs: 2000 }, { method: "POST", url: `https://127.0.0.1:${port}/x` }));
    expect(error).toBeInstanceOf(NotSentError);
    expect((error as NotSentError).code).toBe("NOT_SENT");
    expect((error as NotSentError).cause).toMatchObject({ code: "ECONNRESET" });
    expect(classifyError((error as NotSentError).cause).outcome).toBe("UNKNOWN");
  });

  it("signal already aborted: nothing reaches the server", async () => {
    const server = await httpServer((_, __, res) => res.end("ok"));
    const error = await failure(
      callHttp({ signal: AbortSignal.abort() }, { method: "POST", url: `${server.origin}/x`, body: {} }),
    );
    expect(error).toBeInstanceOf(NotSentError);
    expect((error as NotSentError).code).toBe("DEADLINE_EXCEEDED");
    await sleep(50);
    expect(server.seen).toHaveLength(0);
  });

  it("deadline already passed: nothing reaches the server", async () => {
    const server = await httpServer((_, __, res) => res.end("ok"));
    for (const deadline of [{ epochMs: Date.now() - 1 }, Deadline.after(0)]) {
      const error = await failure(callHttp({ deadline }, { method: "POST", url: `${server.origin}/x` }));
      expect(error).toBeInstanceOf(NotSentError);
      expect((error as NotSentError).code).toBe("DEADLINE_EXCEEDED");
    }
    await sleep(50);
    expect(server.seen).toHaveLength(0);
  });

  it("timeout while queued behind a busy connection: NotSent at once, never sent later", async () => {
    let release: (() => void) | undefined;
    const server = await httpServer((_, __, res) => {
      release = () => res.end("first");
    });
    const client = new Client(server.origin); // one connection, no pipelining
    cleanup.add(null, () => client.destroy());
    const first = callHttp({ timeoutMs: 5000 }, { method: "GET", url: `${server.origin}/first`, dispatcher: client });
    while (server.seen.length === 0) await sleep(5);

    const started = performance.now();
    const error = await failure(
      callHttp({ timeoutMs: 200 }, { method: "POST", url: `${server.origin}/second`, body: {}, dispatcher: client }),
    );
    expect(performance.now() - started).toBeLessThan(1500);
    expect(error).toBeInstanceOf(NotSentError);
    expect((error as NotSentError).code).toBe("DEADLINE_EXCEEDED");

    release?.();
    expect((await first).body).toBe("first");
    await sleep(100);
    expect(server.seen.map((s) => s.url)).toEqual(["/first"]);
  });

  it("an Idempotency-Key header differing from the executor's key is refused before sending (T11)", async () => {
    const server = await httpServer((_, __, res) => res.end("ok"));
    const error = await failure(
      callHttp(
        { idempotencyKey: "K" },
        { method: "POST", url: `${server.origin}/charges`, headers: { "idempotency-key": "other" } },
      ),
    );
    expect(error).toBeInstanceOf(NotSentError);
    expect((error as NotSentError).code).toBe("INVALID_ARGUMENTS");
    expect(server.seen).toHaveLength(0);
  });

  it("a RetryAgent dispatcher is refused: it could replay the request", async () => {
    const server = await httpServer((_, __, res) => res.end("ok"));
    const dispatcher = new RetryAgent(agent());
    const error = await failure(callHttp({}, { method: "POST", url: `${server.origin}/x`, dispatcher }));
    expect(error).toMatchObject({ name: "NotSentError", code: "INVALID_ARGUMENTS" });
    expect(server.seen).toHaveLength(0);
  });

  it("an invalid header value is refused by undici before sending", async () => {
    const server = await httpServer((_, __, res) => res.end("ok"));
    const error = await failure(
      callHttp({}, { method: "POST", url: `${server.origin}/x`, headers: { "x-bad": "a\r\nb: c" } }),
    );
    expect(error).toBeInstanceOf(NotSentError);
    expect((error as NotSentError).code).toBe("INVALID_ARGUMENTS");
    expect(server.seen).toHaveLength(0);
  });
});

describe("callHttp: after the request was sent → AmbiguousError", () => {
  it("server reads the request and never answers; timeoutMs 300 → READ_TIMEOUT", async () => {
    const server = await httpServer(() => {});
    const started = performance.now();
    const error = await failure(
      callHttp({ timeoutMs: 300 }, { method: "POST", url: `${server.origin}/slow`, body: { a: 1 } }),
    );
    expect(performance.now() - started).toBeLessThan(2000);
    expect(error).toBeInstanceOf(AmbiguousError);
    expect((error as AmbiguousError).code).toBe("READ_TIMEOUT");
    expect(server.seen).toHaveLength(1);
  });

  it("ctx.signal aborted after sending → READ_TIMEOUT", async () => {
    const server = await httpServer(() => {});
    const controller = new AbortController();
    const call = failure(callHttp({ signal: controller.signal }, { method: "POST", url: `${server.origin}/x` }));
    while (server.seen.length === 0) await sleep(5);
    controller.abort();
    const error = await call;
    expect(error).toBeInstanceOf(AmbiguousError);
    expect((error as AmbiguousError).code).toBe("READ_TIMEOUT");
  });

  it("undici's own headers timeout (UND_ERR_HEADERS_TIMEOUT) → READ_TIMEOUT", async () => {
    const server = await httpServer(() => {});
    const error = await failure(
      callHttp({}, { method: "POST", url: `${server.origin}/x`, dispatcher: agent({ headersTimeout: 200 }) }),
    );
    expect(error).toBeInstanceOf(AmbiguousError);
    expect((error as AmbiguousError).code).toBe("READ_TIMEOUT");
    expect((error as AmbiguousError).cause).toMatchObject({ code: "UND_ERR_HEADERS_TIMEOUT" });
  });

  it("200 whose body stalls; timeoutMs 300 → READ_TIMEOUT", async () => {
    const server = await httpServer((_, __, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": "100" });
      res.write('{"partial":');
    });
    const error = await failure(callHttp({ timeoutMs: 300 }, { method: "POST", url: `${server.origin}/x` }));
    expect(error).toBeInstanceOf(AmbiguousError);
    expect((error as AmbiguousError).code).toBe("READ_TIMEOUT");
  });

  it("server resets the socket (RST) after reading the request → RESET_AFTER_WRITE", async () => {
    const server = await rawServer((socket) => socket.resetAndDestroy());
    const error = await failure(callHttp({ timeoutMs: 2000 }, { method: "POST", url: `${server.origin}/x`, body: {} }));
    expect(error).toBeInstanceOf(AmbiguousError);
    expect((error as AmbiguousError).code).toBe("RESET_AFTER_WRITE");
    expect(server.raws).toHaveLength(1);
  });

  it("server closes the socket (FIN) after reading the request → RESET_AFTER_WRITE", async () => {
    const server = await rawServer((socket) => socket.end());
    const error = await failure(callHttp({ timeoutMs: 2000 }, { method: "POST", url: `${server.origin}/x`, body: {} }));
    expect(error).toBeInstanceOf(AmbiguousError);
    expect((error as AmbiguousError).code).toBe("RESET_AFTER_WRITE");
    expect((error as AmbiguousError).cause).toMatchObject({ code: "UND_ERR_SOCKET" });
  });
});

describe("field-t07-keepalive-post-no-replay", () => {
  it("a POST on a pooled keep-alive socket that the server resets is sent exactly once", async () => {
    let posts = 0;
    const server = await httpServer((seen, req, res) => {
      if (seen.method === "POST" && posts++ === 0) {
        // Whole request read, effect committed, then reset before any response byte.
        req.socket.resetAndDestroy();
        return;
      }
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ ok: true, method: seen.method }));
    });
    const dispatcher = agent({ keepAliveTimeout: 10_000 });

    const probe = await callHttp({}, { method: "GET", url: `${server.origin}/orders?key=K`, dispatcher });
    expect(probe.body).toEqual({ ok: true, method: "GET" });
    // undici frees the pooled client a tick after the body ends; a POST dispatched in the same tick
    // would open a second connection and miss the keep-alive path under test.
    await sleep(50);

    const error = await failure(
      callHttp(
        { idempotencyKey: "K", timeoutMs: 5000 },
        { method: "POST", url: `${server.origin}/orders`, body: { customerRef: "CUST-0001" }, dispatcher },
      ),
    );
    expect(error).toBeInstanceOf(AmbiguousError);
    expect((error as AmbiguousError).code).toBe("RESET_AFTER_WRITE");
    expect(classifyError(error).outcome).toBe("UNKNOWN");

    const [get, post] = server.seen;
    expect(post?.remotePort).toBe(get?.remotePort); // the POST really went over the pooled socket
    await sleep(300);
    expect(server.seen.filter((s) => s.method === "POST")).toHaveLength(1);
    expect(posts).toBe(1);

    // Later requests are served normally, on a new socket.
    const again = await callHttp({}, { method: "GET", url: `${server.origin}/orders?key=K`, dispatcher });
    expect(again.status).toBe(200);
    expect(server.seen.filter((s) => s.method === "POST")).toHaveLength(1);
  });
});

describe("callHttp: statuses", () => {
  async function statusServer(status: number, headers: Record<string, string> = {}, body = "") {
    return httpServer((_, __, res) => {
      res.writeHead(status, headers);
      res.end(body);
    });
  }

  it("504 → Ambiguous GATEWAY_5XX", async () => {
    const server = await statusServer(504);
    const error = await failure(callHttp({}, { method: "POST", url: `${server.origin}/x` }));
    expect(error).toBeInstanceOf(AmbiguousError);
    expect(error).toMatchObject({ code: "GATEWAY_5XX", httpStatus: 504 });
  });

  it("500 → Ambiguous AMBIGUOUS", async () => {
    const server = await statusServer(500);
    const error = await failure(callHttp({}, { method: "POST", url: `${server.origin}/x` }));
    expect(error).toMatchObject({ name: "AmbiguousError", code: "AMBIGUOUS", httpStatus: 500 });
  });

  it("409 → Ambiguous IN_FLIGHT", async () => {
    const server = await statusServer(409);
    const error = await failure(callHttp({ idempotencyKey: "K" }, { method: "POST", url: `${server.origin}/x` }));
    expect(error).toBeInstanceOf(AmbiguousError);
    expect(error).toMatchObject({ code: "IN_FLIGHT", httpStatus: 409 });
  });

  it("422 → Rejected with the parsed body", async () => {
    const server = await statusServer(422, { "content-type": "application/problem+json" }, '{"title":"bad sku"}');
    const error = await failure(callHttp({}, { method: "POST", url: `${server.origin}/x` }));
    expect(error).toBeInstanceOf(RejectedError);
    expect(error).toMatchObject({ code: "REJECTED", httpStatus: 422, body: { title: "bad sku" } });
    expect(classifyError(error)).toMatchObject({ outcome: "FAILED_NO_EFFECT", httpStatus: 422 });
  });

  it("429 with Retry-After: 1 → Rejected, retryAfterMs 1000", async () => {
    const server = await statusServer(429, { "retry-after": "1" }, "slow down");
    const error = await failure(callHttp({}, { method: "POST", url: `${server.origin}/x` }));
    expect(error).toBeInstanceOf(RejectedError);
    expect(error).toMatchObject({ httpStatus: 429, retryAfterMs: 1000, body: "slow down" });
    expect(classifyError(error)).toMatchObject({ outcome: "FAILED_NO_EFFECT", retryAfterMs: 1000 });
  });

  it("408 is Ambiguous by default, Rejected with noEffectStatuses [408]", async () => {
    const server = await statusServer(408);
    const url = `${server.origin}/x`;
    expect(await failure(callHttp({}, { method: "POST", url }))).toMatchObject({
      name: "AmbiguousError",
      code: "AMBIGUOUS",
      httpStatus: 408,
    });
    const error = await failure(callHttp({}, { method: "POST", url, noEffectStatuses: [408] }));
    expect(error).toBeInstanceOf(RejectedError);
    expect(error).toMatchObject({ httpStatus: 408 });
  });

  it("200 JSON is parsed; headers are flattened", async () => {
    const server = await statusServer(200, { "content-type": "application/json; charset=utf-8" }, '{"id":"o-1"}');
    const response = await callHttp({}, { method: "GET", url: `${server.origin}/x` });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ id: "o-1" });
    expect(response.headers["content-type"]).toBe("application/json; charset=utf-8");
  });

  it("200 text stays text", async () => {
    const server = await statusServer(200, { "content-type": "text/plain" }, "hello");
    expect((await callHttp({}, { method: "GET", url: `${server.origin}/x` })).body).toBe("hello");
  });

  it("207 Multi-Status → Ambiguous PARTIAL_EFFECT carrying the parsed items (RFC 4918 §13)", async () => {
    const items = {
      items: [
        { id: "a", status: 200 },
        { id: "b", status: 409 },
      ],
    };
    const server = await statusServer(207, { "content-type": "application/json" }, JSON.stringify(items));
    const error = await failure(callHttp({}, { method: "POST", url: `${server.origin}/batch` }));
    expect(error).toBeInstanceOf(AmbiguousError);
    expect(error).toMatchObject({ code: "PARTIAL_EFFECT", httpStatus: 207, body: items });
    expect(classifyError(error)).toMatchObject({ outcome: "UNKNOWN", code: "PARTIAL_EFFECT" });
  });

  it('207 with multiStatus: "read" is returned to the caller, who reads the items', async () => {
    const items = { items: [{ id: "a", status: 200 }] };
    const server = await statusServer(207, { "content-type": "application/json" }, JSON.stringify(items));
    const response = await callHttp({}, { method: "POST", url: `${server.origin}/batch`, multiStatus: "read" });
    expect(response).toMatchObject({ status: 207, body: items });
    // The option reads 207 only: other ambiguous statuses still throw.
    const gateway = await statusServer(504);
    const error = await failure(callHttp({}, { method: "POST", url: `${gateway.origin}/x`, multiStatus: "read" }));
    expect(error).toMatchObject({ name: "AmbiguousError", code: "GATEWAY_5XX" });
  });

  it("204 → body undefined", async () => {
    const server = await statusServer(204);
    const response = await callHttp({}, { method: "DELETE", url: `${server.origin}/x` });
    expect(response).toMatchObject({ status: 204, body: undefined });
  });
});

describe("callHttp: headers", () => {
  it("Idempotency-Key and Request-Deadline reach the server; the body is JSON", async () => {
    const server = await httpServer((_, __, res) => res.end());
    const deadline = Deadline.after(10_000);
    await callHttp(
      { idempotencyKey: "key-123", deadline, timeoutMs: 5000, clientRef: "ignored" },
      {
        method: "POST",
        url: `${server.origin}/charges`,
        headers: { "IDEMPOTENCY-KEY": "key-123", "x-trace": "t1" },
        body: { amountCents: 2000 },
      },
    );
    const [seen] = server.seen;
    expect(seen?.headers[IDEMPOTENCY_KEY_HEADER.toLowerCase()]).toBe("key-123");
    expect(seen?.headers[REQUEST_DEADLINE_HEADER.toLowerCase()]).toBe(String(deadline.epochMs));
    expect(seen?.headers["x-trace"]).toBe("t1");
    expect(seen?.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(seen?.body ?? "")).toEqual({ amountCents: 2000 });
  });

  it("a caller's Request-Deadline header cannot replace the context's; string bodies go as is", async () => {
    const server = await httpServer((_, __, res) => res.end());
    await callHttp(
      { deadline: { epochMs: Date.now() + 60_000 } },
      {
        method: "POST",
        url: `${server.origin}/x`,
        headers: { "request-deadline": "1", "content-type": "text/plain" },
        body: "raw text",
      },
    );
    const [seen] = server.seen;
    expect(Number(seen?.headers["request-deadline"])).toBeGreaterThan(Date.now());
    expect(seen?.headers["content-type"]).toBe("text/plain");
    expect(seen?.body).toBe("raw text");
  });
});

describe("field-t03: a retry inside one call cannot hide a delivered request", () => {
  it("after a request was sent under a call's signal, a later 'not sent' of the same call is UNKNOWN", async () => {
    const { origin, seen } = await httpServer(() => {
      // read the request, never answer
    });
    const controller = new AbortController();
    const first = await failure(
      callHttp({ signal: controller.signal, timeoutMs: 200 }, { method: "POST", url: `${origin}/send`, body: {} }),
    );
    expect(first).toBeInstanceOf(AmbiguousError);
    controller.abort(new Error("the call's timeout"));
    // An SDK retry under the same, now aborted, call: nothing is sent, but the call as a whole may have had an effect.
    const retry = await failure(
      callHttp({ signal: controller.signal, timeoutMs: 200 }, { method: "POST", url: `${origin}/send`, body: {} }),
    );
    expect(retry).toBeInstanceOf(AmbiguousError);
    expect(seen).toHaveLength(1);
    // A fresh call that never sent anything still reports "not sent".
    const fresh = new AbortController();
    fresh.abort();
    expect(
      await failure(callHttp({ signal: fresh.signal }, { method: "POST", url: `${origin}/send`, body: {} })),
    ).toBeInstanceOf(NotSentError);
  });
});

describe("field-t03 / rule 11: callHttp judges 'not sent' for the whole invoke (issue 9 §3)", () => {
  it("a request of another invoke that was written does not make this invoke's refused request UNKNOWN", async () => {
    const ok = await httpServer((_, __, res) => res.end("ok"));
    const port = await freePort();
    const [a, b] = await Promise.all([
      invokeTracked(() => callHttp({}, { method: "POST", url: `${ok.origin}/x`, body: {} })),
      invokeTracked(() => callHttp({}, { method: "POST", url: `http://127.0.0.1:${port}/x`, body: {} })),
    ]);
    expect(a).toMatchObject({ ok: true, written: true });
    expect(b).toMatchObject({ ok: false, written: false, ioStarted: true });
    expect(b.ok ? undefined : b.error).toBeInstanceOf(NotSentError);
    expect(classifyInvokeFailure(b as Extract<typeof b, { ok: false }>)).toMatchObject({
      outcome: "FAILED_NO_EFFECT",
      code: "NOT_SENT",
    });
  });

  it("a request aborted while queued (never written) leaves the invoke unwritten: FAILED_NO_EFFECT", async () => {
    let release: (() => void) | undefined;
    const server = await httpServer((_, __, res) => {
      release = () => res.end("first");
    });
    const client = new Client(server.origin); // one connection, no pipelining
    cleanup.add(null, () => client.destroy());
    // The connection is busy with a request of another call (outside this invoke).
    const first = callHttp({ timeoutMs: 5000 }, { method: "GET", url: `${server.origin}/first`, dispatcher: client });
    while (server.seen.length === 0) await sleep(5);

    const attempt = await invokeTracked(() =>
      callHttp({ timeoutMs: 200 }, { method: "POST", url: `${server.origin}/second`, body: {}, dispatcher: client }),
    );
    expect(attempt).toMatchObject({ ok: false, written: false, writtenRequests: 0, ioStarted: true });
    const failed = attempt as Extract<typeof attempt, { ok: false }>;
    expect(failed.error).toMatchObject({ name: "NotSentError", code: "DEADLINE_EXCEEDED" });
    expect(classifyInvokeFailure(failed)).toMatchObject({ outcome: "FAILED_NO_EFFECT", code: "DEADLINE_EXCEEDED" });

    release?.();
    await first;
    await sleep(100);
    expect(server.seen.map((s) => s.url)).toEqual(["/first"]);
  });

  it("a 4xx after an earlier written request of the same invoke is UNKNOWN; the only request's 4xx stays a refusal", async () => {
    let calls = 0;
    const server = await httpServer((_, __, res) => {
      res.writeHead(calls++ === 0 ? 503 : 422);
      res.end();
    });
    const sdk = async () => {
      try {
        return await callHttp({}, { method: "POST", url: `${server.origin}/x`, body: {} });
      } catch {
        return await callHttp({}, { method: "POST", url: `${server.origin}/x`, body: {} }); // the SDK retries the 503
      }
    };
    const retried = await invokeTracked(sdk);
    expect(retried).toMatchObject({ ok: false, written: true, writtenRequests: 2 });
    const failed = retried as Extract<typeof retried, { ok: false }>;
    expect(failed.error).toBeInstanceOf(RejectedError);
    expect(classifyInvokeFailure(failed)).toMatchObject({ outcome: "UNKNOWN", code: "AMBIGUOUS", httpStatus: 422 });

    const single = await invokeTracked(() => callHttp({}, { method: "POST", url: `${server.origin}/x`, body: {} }));
    expect(single).toMatchObject({ ok: false, written: true, writtenRequests: 1 });
    expect(classifyInvokeFailure(single as Extract<typeof single, { ok: false }>)).toMatchObject({
      outcome: "FAILED_NO_EFFECT",
      code: "REJECTED",
      httpStatus: 422,
    });
  });
});
