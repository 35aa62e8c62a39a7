import { connect, type Socket } from "node:net";
import { ApiKeyStore, createPrismaIntentStore, createTestDatabase } from "@tristate/db";
import { refundTool } from "@tristate/testing";
import { createTRPCClient, httpBatchLink, TRPCClientError } from "@trpc/client";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { readEnv } from "../src/env.ts";
import { throttleKey } from "../src/trpc/auth-throttle.ts";
import type { AppRouter } from "../src/trpc/router.ts";
import { startServiceProcess } from "./processes.ts";
import { startStack, type TestStack } from "./support.ts";

const BAD_KEY = "ts_agent_not-a-real-key-0000000000";

/** A raw TCP client: what it received, and when the server closed it (ms after `open`). */
function rawSocket(url: string): { socket: Socket; received: () => string; closed: Promise<number> } {
  const { hostname, port } = new URL(url);
  const started = Date.now();
  const socket = connect(Number(port), hostname);
  let received = "";
  socket.on("data", (d: Buffer) => {
    received += d.toString();
  });
  socket.on("error", () => {});
  const closed = new Promise<number>((resolve) => socket.on("close", () => resolve(Date.now() - started)));
  return { socket, received: () => received, closed };
}

/** `?batch=1` GET of `n` calls of `procedure`, each with `input`. */
function batchGetUrl(base: string, procedure: string, n: number, input: unknown = undefined): string {
  const inputs = Object.fromEntries(Array.from({ length: n }, (_, i) => [i, input]));
  const paths = Array.from({ length: n }, () => procedure).join(",");
  return `${base}/trpc/${paths}?batch=1&input=${encodeURIComponent(JSON.stringify(inputs))}`;
}

describe("batches, answers and slow clients are bounded", () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({
      env: {
        TRISTATE_MAX_BATCH_CALLS: "5",
        TRISTATE_MAX_RESPONSE_BYTES: "2048",
        TRISTATE_HEADERS_TIMEOUT_MS: "500",
        TRISTATE_REQUEST_TIMEOUT_MS: "1000",
      },
      tools: (remote) => [refundTool(remote, { timeoutMs: 5000 })],
    });
  });
  afterAll(async () => {
    await stack?.close();
  });
  const get = (url: string, key: string) => fetch(url, { headers: { authorization: `Bearer ${key}` } });

  it("a GET batch over TRISTATE_MAX_BATCH_CALLS → 400 naming the limit; at the limit → 200", async () => {
    const over = await get(batchGetUrl(stack.service.url, "intents.list", 6, {}), stack.keys.viewer);
    expect(over.status).toBe(400);
    const body = (await over.json()) as { error: { message: string; data: { code: string; field: string } } };
    expect(body.error.message).toMatch(/at most 5 calls \(TRISTATE_MAX_BATCH_CALLS\); this one has 6/);
    expect(body.error.data).toMatchObject({ code: "BAD_REQUEST", httpStatus: 400, field: "batch" });
    const at = await get(batchGetUrl(stack.service.url, "intents.list", 5, {}), stack.keys.viewer);
    expect(at.status).toBe(200);
    expect(await at.json()).toHaveLength(5);
  });

  it("a 500-call POST batch of calls.execute → 400 and not one call runs", async () => {
    const n = 500;
    const inputs = Object.fromEntries(
      Array.from({ length: n }, (_, i) => [
        i,
        { runId: "run-batch", stepId: `s-${i}`, tool: "issue_refund", args: { order_id: `B-${i}`, amount: 1 } },
      ]),
    );
    const paths = Array.from({ length: n }, () => "calls.execute").join(",");
    const res = await fetch(`${stack.service.url}/trpc/${paths}?batch=1`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.keys.agent}`, "content-type": "application/json" },
      body: JSON.stringify(inputs),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/at most 5 calls/);
    expect(stack.remote.posts).toBe(0);
    const records = await stack.get("runs.get", { runId: "run-batch" }, stack.keys.viewer);
    expect(JSON.stringify(records.json)).not.toMatch(/B-\d/);
  });

  it("@trpc/client's httpBatchLink reads the refusal for every call of the batch", async () => {
    const client = createTRPCClient<AppRouter>({
      links: [
        httpBatchLink({ url: `${stack.service.url}/trpc`, headers: { authorization: `Bearer ${stack.keys.viewer}` } }),
      ],
    });
    const results = await Promise.allSettled(Array.from({ length: 6 }, () => client.prompt.rule.query()));
    for (const r of results) {
      expect(r.status).toBe("rejected");
      const error = (r as PromiseRejectedResult).reason as TRPCClientError<AppRouter>;
      expect(error).toBeInstanceOf(TRPCClientError);
      expect(error.message).toMatch(/TRISTATE_MAX_BATCH_CALLS/);
      expect(error.data?.httpStatus).toBe(400);
    }
  });

  it("an answer over TRISTATE_MAX_RESPONSE_BYTES → 413 naming the limit; a smaller one passes", async () => {
    const one = await get(`${stack.service.url}/trpc/tools.list`, stack.keys.viewer);
    expect(one.status).toBe(200);
    const size = (await one.text()).length;
    expect(size).toBeLessThan(2048);
    expect(5 * size).toBeGreaterThan(2048); // a batch of 5 answers together is over the limit
    const over = await get(batchGetUrl(stack.service.url, "tools.list", 5), stack.keys.viewer);
    expect(over.status).toBe(413);
    expect(over.headers.get("content-type")).toBe("application/json");
    const body = (await over.json()) as { error: { message: string; data: { code: string; httpStatus: number } } };
    expect(body.error.message).toMatch(/over 2048 \(TRISTATE_MAX_RESPONSE_BYTES\)/);
    expect(body.error.data).toMatchObject({ code: "PAYLOAD_TOO_LARGE", httpStatus: 413 });
  });

  it("a body that trickles in is cut off at TRISTATE_REQUEST_TIMEOUT_MS (408, socket closed, nothing run)", async () => {
    // With a key tRPC waits for the body; without one the server answers 401 at once, without reading
    // the body, and closes the connection (an unauthenticated trickle holds no socket).
    const sockets = [stack.keys.agent, null].map((key) => {
      const c = rawSocket(stack.service.url);
      c.socket.write("POST /trpc/calls.execute HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n");
      if (key) c.socket.write(`Authorization: Bearer ${key}\r\n`);
      c.socket.write("Content-Length: 1000\r\n\r\n{");
      return c;
    });
    const drip = setInterval(() => {
      for (const c of sockets) if (c.socket.writable) c.socket.write(" ");
    }, 100);
    const closedAfter = await Promise.all(sockets.map((c) => c.closed));
    clearInterval(drip);
    const [withKey, withoutKey] = closedAfter as [number, number];
    expect(withKey).toBeGreaterThanOrEqual(900);
    expect(withKey).toBeLessThan(3000); // timeout + Node's check interval (≤ 1 s)
    expect(withoutKey).toBeLessThan(900);
    expect(sockets[0]?.received()).toMatch(/^HTTP\/1\.1 408 Request Timeout/);
    expect(sockets[1]?.received()).toMatch(/^HTTP\/1\.1 401 /);
    expect(sockets[1]?.received()).not.toMatch(/408/);
    expect(stack.remote.posts).toBe(0);
    // The service is unharmed.
    expect((await stack.get("prompt.rule", undefined, stack.keys.agent)).status).toBe(200);
  });

  it("headers that never end are cut off at TRISTATE_HEADERS_TIMEOUT_MS; a silent socket too", async () => {
    const slow = rawSocket(stack.service.url);
    slow.socket.write("GET /trpc/tools.list HTTP/1.1\r\nHost: x\r\n");
    const drip = setInterval(() => slow.socket.writable && slow.socket.write("X-Pad: y\r\n"), 50);
    const silent = rawSocket(stack.service.url);
    const [slowAfter, silentAfter] = await Promise.all([slow.closed, silent.closed]);
    clearInterval(drip);
    for (const after of [slowAfter, silentAfter]) {
      expect(after).toBeGreaterThanOrEqual(400);
      expect(after).toBeLessThan(2000);
    }
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 /);
  });

  it("a call that runs longer than the request timeout still gets its answer (the timeout bounds receiving only)", async () => {
    stack.remote.fault({ respondDelayMs: 2000 });
    const started = Date.now();
    const res = await stack.post("calls.execute", {
      runId: "run-slow",
      stepId: "s-1",
      tool: "issue_refund",
      args: { order_id: "S-1", amount: 5 },
      budgetMs: 20_000,
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    expect(res.status).toBe(200);
    expect(res.json.result.data.status).toBe("SUCCEEDED");
  });
});

describe("connections are capped", () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({ env: { TRISTATE_MAX_CONNECTIONS: "3" } });
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("past TRISTATE_MAX_CONNECTIONS a new connection is closed at once, and served again once others leave", async () => {
    const warn = vi.spyOn(stack.service.services.logger, "warn");
    const held = [rawSocket(stack.service.url), rawSocket(stack.service.url), rawSocket(stack.service.url)];
    for (const h of held) h.socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n"); // unfinished headers
    await new Promise((r) => setTimeout(r, 200)); // let the server accept them
    const extra = rawSocket(stack.service.url);
    extra.socket.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    expect(await extra.closed).toBeLessThan(1000);
    expect(extra.received()).toBe("");
    expect(warn).toHaveBeenCalledWith(
      { dropped: 1, limit: 3 },
      expect.stringMatching(/connection limit reached.*TRISTATE_MAX_CONNECTIONS/),
    );
    for (const h of held) h.socket.destroy();
    await Promise.all(held.map((h) => h.closed));
    await new Promise((r) => setTimeout(r, 100));
    expect((await fetch(`${stack.service.url}/healthz`)).status).toBe(200);
  });
});

describe("failed authentication is throttled per client address", () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack(); // the defaults: 10 failures per 60 s, then 429 for 300 s
  });
  afterAll(async () => {
    await stack?.close();
  });

  it("one address may hold at most TRISTATE_MAX_CONNECTIONS_PER_ADDRESS connections; the rest are closed at once", async () => {
    const limit = stack.service.services.env.TRISTATE_MAX_CONNECTIONS_PER_ADDRESS;
    const held = Array.from({ length: limit }, () => rawSocket(stack.service.url));
    await new Promise((r) => setTimeout(r, 200));
    const extra = rawSocket(stack.service.url);
    const closedAfter = await extra.closed;
    expect(closedAfter).toBeLessThan(500);
    for (const c of held) c.socket.destroy();
    await Promise.all(held.map((c) => c.closed));
    await new Promise((r) => setTimeout(r, 100));
    expect((await stack.get("prompt.rule", undefined, stack.keys.agent)).status).toBe(200);
  });

  it("20 bad keys from one address: 10 × 401, then 429 with Retry-After; a good key still works", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) {
      // The dashboard's sign-in checks a key with auth.whoami; agents call calls.execute.
      const res =
        i % 2
          ? await stack.get("auth.whoami", undefined, `${BAD_KEY}${i}`)
          : await stack.post("calls.execute", { runId: "r", stepId: `s${i}` }, `${BAD_KEY}${i}`);
      statuses.push(res.status);
    }
    expect(statuses).toEqual([...Array(10).fill(401), ...Array(10).fill(429)]);
    const res = await fetch(`${stack.service.url}/trpc/auth.whoami`, {
      headers: { authorization: `Bearer ${BAD_KEY}` },
    });
    expect(res.status).toBe(429);
    const retryAfter = Number(res.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(250);
    expect(retryAfter).toBeLessThanOrEqual(300);
    const body = (await res.json()) as { error: { message: string; data: { code: string } } };
    expect(body.error.data.code).toBe("TOO_MANY_REQUESTS");
    expect(body.error.message).toMatch(/too many failed API keys from this address .*retry in \d+ s/);

    // A valid key from the same address is never throttled; no key at all is not a guess.
    const who = await stack.get("auth.whoami", undefined, stack.keys.viewer);
    expect(who.status).toBe(200);
    expect(who.json.result.data.role).toBe("viewer");
    const call = await stack.post("calls.execute", {
      runId: "run-ok",
      stepId: "s-1",
      tool: "issue_refund",
      args: { order_id: "OK-1", amount: 3 },
    });
    expect(call.status).toBe(200);
    expect((await stack.get("auth.whoami", undefined, null)).status).toBe(401);
  });

  it("without a trusted proxy, X-Forwarded-For is ignored (it cannot buy fresh addresses)", async () => {
    const res = await stack.post("calls.execute", {}, BAD_KEY, { "x-forwarded-for": "203.0.113.99" });
    expect(res.status).toBe(429);
  });
});

describe("behind a trusted proxy (the dashboard's server), the forwarded client is counted", () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await startStack({
      env: { TRISTATE_TRUSTED_PROXIES: "127.0.0.1, ::1", TRISTATE_AUTH_FAILURES: "3" },
    });
  });
  afterAll(async () => {
    await stack?.close();
  });
  const whoami = (key: string, forwardedFor: string) =>
    fetch(`${stack.service.url}/trpc/auth.whoami`, {
      headers: { authorization: `Bearer ${key}`, "x-forwarded-for": forwardedFor },
    });

  it("each forwarded client has its own count; a spoofed first hop does not escape it", async () => {
    const first = [];
    for (let i = 0; i < 4; i++) first.push((await whoami(BAD_KEY, "203.0.113.7")).status);
    expect(first).toEqual([401, 401, 401, 429]);
    expect((await whoami(BAD_KEY, "203.0.113.8")).status).toBe(401);
    // The client put its own X-Forwarded-For in front: the hop our proxy saw is still 203.0.113.7.
    expect((await whoami(BAD_KEY, "198.51.100.1, 203.0.113.7")).status).toBe(429);
    expect((await whoami(stack.keys.operator, "203.0.113.7")).status).toBe(200);
  });
});

it("the service logs failed and throttled keys (JSON on stdout) and still stops on SIGTERM", async () => {
  const db = await createTestDatabase();
  const store = createPrismaIntentStore({ databaseUrl: db.url });
  try {
    const good = (await new ApiKeyStore(store.prisma).create({ name: "viewer", role: "viewer" })).secret;
    const service = await startServiceProcess({ DATABASE_URL: db.url, TRISTATE_AUTH_FAILURES: "2" });
    try {
      const whoami = (key: string) =>
        fetch(`${service.url}/trpc/auth.whoami`, { headers: { authorization: `Bearer ${key}` } });
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await whoami(BAD_KEY)).status);
      expect(statuses).toEqual([401, 401, 429, 429]);
      expect((await whoami(good)).status).toBe(200);
      const lines = service
        .output()
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as { level: number; msg: string; client?: string; retryAfterS?: number });
      const failed = lines.filter((l) => l.msg.startsWith("authentication failed"));
      const throttled = lines.filter((l) => l.msg.startsWith("authentication throttled"));
      expect(failed).toHaveLength(2);
      expect(throttled).toHaveLength(1); // the first refusal; then one line per 100, not one per guess
      expect(throttled[0]).toMatchObject({ level: 40, client: "127.0.0.1" });
      expect(throttled[0]?.retryAfterS).toBeGreaterThan(0);
      expect(await service.stop()).toBe(0);
    } finally {
      await service.kill();
    }
  } finally {
    await store.close();
    await db.drop();
  }
});

describe("settings", () => {
  it("IPv6 clients are counted per /64; IPv4 per address", () => {
    expect(throttleKey("2001:db8:1:2:3:4:5:6")).toBe(throttleKey("2001:db8:1:2::9"));
    expect(throttleKey("2001:db8:1:2::9")).toBe("2001:db8:1:2::/64");
    expect(throttleKey("2001:db8:1:3::1")).not.toBe(throttleKey("2001:db8:1:2::1"));
    expect(throttleKey("::1")).toBe("0:0:0:0::/64");
    expect(throttleKey("203.0.113.7")).toBe("203.0.113.7");
  });

  it("defaults, and refusals naming the variable", () => {
    const env = readEnv({});
    expect(env).toMatchObject({
      TRISTATE_MAX_BATCH_CALLS: 20,
      TRISTATE_MAX_RESPONSE_BYTES: 16 * 1_048_576,
      TRISTATE_HEADERS_TIMEOUT_MS: 10_000,
      TRISTATE_REQUEST_TIMEOUT_MS: 30_000,
      TRISTATE_KEEP_ALIVE_TIMEOUT_MS: 5_000,
      TRISTATE_MAX_CONNECTIONS: 1000,
      TRISTATE_AUTH_FAILURES: 10,
      TRISTATE_AUTH_FAILURE_WINDOW_MS: 60_000,
      TRISTATE_AUTH_BLOCK_MS: 300_000,
      TRISTATE_TRUSTED_PROXIES: [],
    });
    expect(readEnv({ TRISTATE_TRUSTED_PROXIES: "10.0.0.0/8, ::1" }).TRISTATE_TRUSTED_PROXIES).toEqual([
      "10.0.0.0/8",
      "::1",
    ]);
    expect(() => readEnv({ TRISTATE_TRUSTED_PROXIES: "10.0.0.0/33" })).toThrow(/TRISTATE_TRUSTED_PROXIES/);
    expect(() => readEnv({ TRISTATE_TRUSTED_PROXIES: "proxy.local" })).toThrow(/TRISTATE_TRUSTED_PROXIES/);
    expect(() => readEnv({ TRISTATE_HEADERS_TIMEOUT_MS: "40000" })).toThrow(
      /TRISTATE_HEADERS_TIMEOUT_MS: must not exceed TRISTATE_REQUEST_TIMEOUT_MS/,
    );
    expect(() => readEnv({ TRISTATE_MAX_BATCH_CALLS: "0" })).toThrow(/TRISTATE_MAX_BATCH_CALLS/);
    // The sweeper's settings; an empty value (`NAME=`, as compose files leave them) is the default.
    expect(readEnv({ TRISTATE_SWEEP_CONCURRENCY: "", TRISTATE_SWEEP_LANES: "3" })).toMatchObject({
      TRISTATE_SWEEP_CONCURRENCY: 64,
      TRISTATE_SWEEP_LANES: 3,
      TRISTATE_SWEEP_LIMIT: 1000,
      TRISTATE_SWEEP_INTERVAL_MS: 5000,
    });
    expect(() => readEnv({ TRISTATE_SWEEP_LANES: "17" })).toThrow(/TRISTATE_SWEEP_LANES/);
    expect(() => readEnv({ TRISTATE_SWEEP_CONCURRENCY: "1.5" })).toThrow(/TRISTATE_SWEEP_CONCURRENCY/);
  });
});
