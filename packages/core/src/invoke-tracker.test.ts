import { once } from "node:events";
import http from "node:http";
import net from "node:net";
import { Cleanup } from "@tristate/testing";
import fc from "fast-check";
import { Agent, Client, request as undiciRequest } from "undici";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { closedOrigin } from "./classify/fixtures.ts";
import { classifyError } from "./classify/index.ts";
import { classifyInvokeFailure } from "./classify-invoke.ts";
import { AmbiguousError, NotSentError } from "./errors.ts";
import { callHttp } from "./http.ts";
import { type InvokeAttempt, invokeTracked } from "./invoke-tracker.ts";

// Real loopback sockets only (node:net / node:http servers on 127.0.0.1, port 0). DESIGN.md rule 11,
// issue 9 §3: "was anything written?" is answered for the whole invoke, not for its last attempt.

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

async function listen(server: net.Server): Promise<string> {
  cleanup.server(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
}

/**
 * The field case: the server reads the whole request (the effect is committed), stops listening and
 * resets the connection before answering. Every later attempt to the same port is refused
 * (ECONNREFUSED) — which, judged alone, says "not sent".
 */
async function commitThenVanish(): Promise<{ origin: string; committed: string[] }> {
  const committed: string[] = [];
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
      committed.push(buffer.slice(0, end));
      server.close(); // stop listening: the next connection is refused
      socket.resetAndDestroy();
    });
  });
  return { origin: await listen(server), committed };
}

/** A keep-alive HTTP server answering 200 "ok" (or holding requests whose path starts with /hold). */
async function okServer(): Promise<{ origin: string; seen: string[]; releaseAll: () => void }> {
  const seen: string[] = [];
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      seen.push(`${req.method} ${req.url}`);
      if (req.url?.startsWith("/hold")) held.push(res);
      else res.end("ok");
    });
  });
  server.keepAliveTimeout = 10_000;
  const origin = await listen(server);
  const releaseAll = () => {
    for (const res of held.splice(0)) res.end("released");
  };
  return { origin, seen, releaseAll };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What SDKs do: try up to `attempts` times on any error, then throw the last error. */
async function sdkRetrying<T>(send: () => Promise<T>, attempts = 3): Promise<T> {
  let last: unknown;
  for (let i = 0; i < attempts; i++) {
    try {
      return await send();
    } catch (error) {
      last = error;
    }
  }
  throw last;
}

/** A node:http POST (the transport of axios, got, node-fetch and the AWS SDK's NodeHttpHandler). */
function nodeHttpPost(url: string, agent?: http.Agent): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", agent, headers: { "content-type": "application/json" } });
    req.on("error", reject);
    req.on("response", (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve(body));
      res.on("error", reject);
    });
    req.end("{}");
  });
}

function undiciPost(url: string, dispatcher: Agent): Promise<string> {
  return undiciRequest(url, { method: "POST", body: "{}", dispatcher }).then((res) => res.body.text());
}

async function fetchPost(url: string): Promise<string> {
  const res = await fetch(url, { method: "POST", body: "{}" });
  return res.text();
}

function failed<T>(attempt: InvokeAttempt<T>): Extract<InvokeAttempt<T>, { ok: false }> {
  if (attempt.ok) throw new Error("expected the invoke to fail");
  return attempt;
}

function agent(): Agent {
  const a = new Agent({ keepAliveTimeout: 4_000 });
  cleanup.add(null, () => a.destroy());
  return a;
}

function httpAgent(options: http.AgentOptions = {}): http.Agent {
  const a = new http.Agent(options);
  cleanup.add(null, () => a.destroy());
  return a;
}

type Send = (url: string) => Promise<string>;
const clients: [name: string, make: () => Send][] = [
  [
    "undici (the SDK's own Agent)",
    () => {
      const dispatcher = agent();
      return (url) => undiciPost(url, dispatcher);
    },
  ],
  ["Node's global fetch (its bundled undici)", () => fetchPost],
  [
    "node:http (axios / got / AWS SDK transport)",
    () => {
      const a = httpAgent({ keepAlive: true });
      return (url) => nodeHttpPost(url, a);
    },
  ],
];

describe("an SDK retrying inside invoke: delivered, reset, then refused twice (issue 9 §3 case 1)", () => {
  it.each(clients)("%s: the last error says NOT_SENT alone, UNKNOWN for the invoke", async (_name, make) => {
    const send = make();
    const server = await commitThenVanish();
    const attempt = failed(await invokeTracked(() => sdkRetrying(() => send(`${server.origin}/refunds`))));

    expect(server.committed).toHaveLength(1); // one effect on the remote
    // The SDK threw its last error, a refused connection: alone, that reads "not sent" (the bug).
    expect(classifyError(attempt.error)).toMatchObject({ outcome: "FAILED_NO_EFFECT", code: "NOT_SENT" });
    // The invoke wrote attempt 1: never FAILED_NO_EFFECT.
    expect(attempt).toMatchObject({ written: true, writtenRequests: 1, ioStarted: true });
    const c = classifyInvokeFailure(attempt);
    expect(c).toMatchObject({ outcome: "UNKNOWN", code: "AMBIGUOUS" });
    expect(c.message).toContain("earlier request of the same invoke was written");
  });

  it.each(clients)("%s: refused on every attempt → written false, FAILED_NO_EFFECT NOT_SENT", async (_name, make) => {
    const send = make();
    const origin = await closedOrigin();
    const attempt = failed(await invokeTracked(() => sdkRetrying(() => send(`${origin}/refunds`))));
    expect(attempt).toMatchObject({ written: false, writtenRequests: 0, ioStarted: true });
    expect(classifyInvokeFailure(attempt)).toMatchObject({ outcome: "FAILED_NO_EFFECT", code: "NOT_SENT" });
  });

  it.each(clients)("%s: a successful request is seen written", async (_name, make) => {
    const send = make();
    const server = await okServer();
    const attempt = await invokeTracked(() => send(`${server.origin}/ok`));
    expect(attempt).toMatchObject({ ok: true, value: "ok", written: true, writtenRequests: 1, ioStarted: true });
  });
});

describe("callHttp with a new AbortSignal per attempt (issue 9 §3 case 2)", () => {
  it("attempts after a written one are AmbiguousError, not NotSentError, and the invoke is UNKNOWN", async () => {
    const server = await commitThenVanish();
    const errors: unknown[] = [];
    const attempt = failed(
      await invokeTracked(() =>
        sdkRetrying(async () => {
          try {
            return await callHttp(
              { signal: new AbortController().signal, timeoutMs: 2000 }, // a new signal per attempt
              { method: "POST", url: `${server.origin}/charges`, body: {} },
            );
          } catch (error) {
            errors.push(error);
            throw error;
          }
        }),
      ),
    );
    expect(server.committed).toHaveLength(1);
    expect(errors[0]).toMatchObject({ name: "AmbiguousError", code: "RESET_AFTER_WRITE" });
    expect(errors).toHaveLength(3);
    for (const later of errors.slice(1)) {
      expect(later).toBeInstanceOf(AmbiguousError);
      expect((later as AmbiguousError).message).toContain("earlier request of the same call");
      // What this attempt was alone: refused, not sent.
      expect((later as AmbiguousError).cause).toMatchObject({ name: "NotSentError", code: "NOT_SENT" });
    }
    expect(classifyInvokeFailure(attempt).outcome).toBe("UNKNOWN");
  });

  it("outside any invoke, separate signals cannot be linked: the second attempt alone is NotSent", async () => {
    // The contrast that shows the invoke context (not the signal) carries the answer above.
    const server = await commitThenVanish();
    const url = `${server.origin}/charges`;
    const first = await callHttp({ signal: new AbortController().signal }, { method: "POST", url }).catch((e) => e);
    expect(first).toBeInstanceOf(AmbiguousError);
    const second = await callHttp({ signal: new AbortController().signal }, { method: "POST", url }).catch((e) => e);
    expect(second).toBeInstanceOf(NotSentError);
  });
});

describe("rule 11: an error thrown when provably nothing was written is FAILED_NO_EFFECT", () => {
  it("a TypeError before any I/O → TOOL_ERROR_NOT_SENT naming the error", async () => {
    const attempt = failed(
      await invokeTracked(async () => {
        const order = undefined as unknown as { id: string };
        return order.id; // TypeError: Cannot read properties of undefined
      }),
    );
    expect(attempt).toMatchObject({ written: false, ioStarted: false, writtenRequests: 0 });
    expect(attempt.error).toBeInstanceOf(TypeError);
    const c = classifyInvokeFailure(attempt);
    expect(c).toMatchObject({ outcome: "FAILED_NO_EFFECT", code: "TOOL_ERROR_NOT_SENT" });
    expect(c.message).toContain("TypeError: Cannot read properties of undefined");
    // Before rule 11 the same error was UNKNOWN and went to the human queue.
    expect(classifyError(attempt.error).outcome).toBe("UNKNOWN");
  });

  it("a synchronous throw, a real ZodError and fetch of a malformed URL → TOOL_ERROR_NOT_SENT", async () => {
    const sync = failed(
      await invokeTracked((() => {
        throw new RangeError("amount out of range");
      }) as () => Promise<never>),
    );
    const zod = failed(await invokeTracked(async () => z.object({ amount: z.number() }).parse({ amount: "x" })));
    const badUrl = failed(await invokeTracked(() => fetch("not a url")));
    for (const attempt of [sync, zod, badUrl]) {
      expect(attempt.ioStarted).toBe(false);
      expect(classifyInvokeFailure(attempt)).toMatchObject({
        outcome: "FAILED_NO_EFFECT",
        code: "TOOL_ERROR_NOT_SENT",
      });
    }
  });

  it("a TypeError AFTER a request was written → UNKNOWN", async () => {
    const server = await okServer();
    const attempt = failed(
      await invokeTracked(async () => {
        const body = await fetchPost(`${server.origin}/refunds`);
        return (JSON.parse("null") as { id: string }).id + body; // the tool's own bug, after the effect
      }),
    );
    expect(server.seen).toEqual(["POST /refunds"]);
    expect(attempt).toMatchObject({ written: true, ioStarted: true });
    expect(classifyInvokeFailure(attempt)).toMatchObject({ outcome: "UNKNOWN", code: "AMBIGUOUS" });
  });

  it("a TypeError after a refused connection (I/O started, nothing written) is not TOOL_ERROR_NOT_SENT", async () => {
    const origin = await closedOrigin();
    const attempt = failed(
      await invokeTracked(async () => {
        await nodeHttpPost(`${origin}/x`).catch(() => undefined);
        throw new TypeError("x is not a function");
      }),
    );
    expect(attempt).toMatchObject({ written: false, ioStarted: true });
    expect(classifyInvokeFailure(attempt).outcome).toBe("UNKNOWN");
  });

  it("a request started without awaiting (on the next tick) before the throw is still seen", async () => {
    const server = await okServer();
    const attempt = failed(
      await invokeTracked(async () => {
        process.nextTick(() => {
          nodeHttpPost(`${server.origin}/fire-and-forget`).catch(() => undefined);
        });
        throw new TypeError("bug right after starting a request");
      }),
    );
    expect(attempt.ioStarted).toBe(true);
    expect(classifyInvokeFailure(attempt).code).not.toBe("TOOL_ERROR_NOT_SENT");
    while (server.seen.length === 0) await sleep(5);
  });
});

describe("requests still in flight when the invoke ends count as written (when unsure, written)", () => {
  it("an undici request queued behind a busy connection, not yet written, makes a NotSent invoke UNKNOWN", async () => {
    const server = await okServer();
    const client = new Client(server.origin); // one connection, no pipelining
    cleanup.add(null, () => client.destroy());
    const busy = client.request({ path: "/hold", method: "GET" }); // another call's request, outside the invoke
    while (server.seen.length === 0) await sleep(5);

    let queued: Promise<unknown> | undefined;
    const attempt = failed(
      await invokeTracked(async () => {
        queued = client.request({ path: "/queued", method: "POST", body: "{}" }).catch(() => undefined);
        throw new NotSentError("the tool gave up early");
      }),
    );
    expect(attempt).toMatchObject({ written: true, writtenRequests: 1 });
    expect(classifyInvokeFailure(attempt).outcome).toBe("UNKNOWN");
    // And indeed: the queued request is written once the connection frees up.
    server.releaseAll();
    await (await busy).body.text();
    await queued;
    expect(server.seen).toEqual(["GET /hold", "POST /queued"]);
  });
});

describe("nesting and concurrency", () => {
  it("an inner invokeTracked's writes also mark the outer one, not the other way round", async () => {
    const server = await okServer();
    let inner: InvokeAttempt<string> | undefined;
    const outer = await invokeTracked(async () => {
      inner = await invokeTracked(() => fetchPost(`${server.origin}/inner`));
      return "done";
    });
    expect(inner).toMatchObject({ ok: true, written: true });
    expect(outer).toMatchObject({ ok: true, written: true, writtenRequests: 1 });

    let cleanInner: InvokeAttempt<number> | undefined;
    const outer2 = await invokeTracked(async () => {
      await fetchPost(`${server.origin}/outer`);
      cleanInner = await invokeTracked(async () => 1);
      return 2;
    });
    expect(outer2).toMatchObject({ written: true });
    expect(cleanInner).toMatchObject({ ok: true, written: false, ioStarted: false });
  });

  it("concurrent invokes sharing keep-alive pools never see each other's requests (property)", async () => {
    const server = await okServer();
    const origin = await closedOrigin();
    const sharedUndici = agent();
    const sharedHttp = httpAgent({ keepAlive: true });
    const send: Record<string, Send> = {
      undici: (url) => undiciPost(url, sharedUndici),
      fetch: fetchPost,
      http: (url) => nodeHttpPost(url, sharedHttp),
      callHttp: (url) => callHttp({}, { method: "POST", url, body: {} }).then(() => "ok"),
    };
    const plan = fc.record({
      action: fc.constantFrom("write", "refused", "none"),
      client: fc.constantFrom("undici", "fetch", "http", "callHttp"),
      delayMs: fc.integer({ min: 0, max: 15 }),
      fail: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(plan, { minLength: 2, maxLength: 8 }), async (plans) => {
        const attempts = await Promise.all(
          plans.map((p) =>
            invokeTracked(async () => {
              await sleep(p.delayMs);
              const sender = send[p.client];
              if (!sender) throw new Error(`no client ${p.client}`);
              if (p.action === "write") await sender(`${server.origin}/w`);
              if (p.action === "refused") await sender(`${origin}/r`).catch(() => undefined);
              await sleep(p.delayMs);
              if (p.fail) throw new NotSentError("planned failure");
              return p.action;
            }),
          ),
        );
        plans.forEach((p, i) => {
          expect(attempts[i]).toMatchObject({
            ok: !p.fail,
            written: p.action === "write",
            writtenRequests: p.action === "write" ? 1 : 0,
            ioStarted: p.action !== "none",
          });
        });
      }),
      { numRuns: 25 },
    );
  });
});
