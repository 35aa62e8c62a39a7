/**
 * Every answer of the executor carries `X-Request-Id` (issue 22 §4): the caller's when valid, else a
 * fresh UUID; the same id is in tRPC error bodies (`error.data.requestId`) and in the answer's log
 * line. (Spans: telemetry.test.ts.)
 */
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../src/logger.ts";
import { startStack, type TestStack } from "./support.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let stack: TestStack;
/** The service's log lines (JSON), from the moment the test's logger is put in. */
const lines: Record<string, unknown>[] = [];
beforeAll(async () => {
  stack = await startStack({ env: { TRISTATE_MAX_BODY_BYTES: "4096" } });
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n")) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  stack.service.services.logger = createLogger("debug", sink);
});
afterAll(async () => {
  await stack?.close();
});

const request = (path: string, init: RequestInit = {}) => fetch(`${stack.service.url}${path}`, init);
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** Every route and the refusals the server makes before tRPC or the MCP transport see a request. */
const ROUTES: [string, () => Promise<Response>, number][] = [
  ["/healthz", () => request("/healthz"), 200],
  ["/readyz", () => request("/readyz"), 200],
  ["unknown path", () => request("/nope"), 404],
  ["tRPC query", () => request("/trpc/tools.list", { headers: bearer(stack.keys.agent) }), 200],
  ["tRPC without a key", () => request("/trpc/tools.list"), 401],
  ["tRPC bad key", () => request("/trpc/tools.list", { headers: bearer("ts_agent_nope-000000000000") }), 401],
  [
    "tRPC body over the limit",
    () =>
      request("/trpc/calls.execute", {
        method: "POST",
        headers: { ...bearer(stack.keys.agent), "content-type": "application/json" },
        body: JSON.stringify({ pad: "x".repeat(5000) }),
      }),
    413,
  ],
  [
    "tRPC bad input",
    () =>
      request("/trpc/calls.execute", {
        method: "POST",
        headers: { ...bearer(stack.keys.agent), "content-type": "application/json" },
        body: "{}",
      }),
    400,
  ],
  ["MCP without a key", () => request("/mcp", { method: "POST", body: "{}" }), 401],
  [
    "MCP initialize",
    () =>
      request("/mcp", {
        method: "POST",
        headers: {
          ...bearer(stack.keys.agent),
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
        }),
      }),
    200,
  ],
];

describe("X-Request-Id on every answer", () => {
  it.each(ROUTES)("%s: a generated UUID, a new one per request", async (_name, send, status) => {
    const first = await send();
    expect(first.status).toBe(status);
    const second = await send();
    const id = first.headers.get("x-request-id");
    expect(id).toMatch(UUID);
    expect(second.headers.get("x-request-id")).toMatch(UUID);
    expect(second.headers.get("x-request-id")).not.toBe(id);
  });

  it("a valid caller id (printable ASCII, up to 200 characters) is echoed; an invalid one replaced", async () => {
    const echo = async (value: string) =>
      (await request("/healthz", { headers: { "x-request-id": value } })).headers.get("x-request-id");
    expect(await echo("turn-42/call 3")).toBe("turn-42/call 3");
    const longest = "r".repeat(200);
    expect(await echo(longest)).toBe(longest);
    expect(await echo("r".repeat(201))).toMatch(UUID);
    expect(await echo("caf\u00e9")).toMatch(UUID);
  });

  it("tRPC errors carry it as error.data.requestId, the server's own refusals too", async () => {
    const refused = await request("/trpc/calls.execute", {
      method: "POST",
      headers: { ...bearer(stack.keys.agent), "content-type": "application/json", "x-request-id": "err-1" },
      body: JSON.stringify({ runId: "r", tool: "issue_refund", args: {}, bogus: 1 }),
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { data: unknown } }).error.data).toMatchObject({ requestId: "err-1" });
    const noKey = await request("/trpc/intents.list");
    const body = (await noKey.json()) as { error: { data: { requestId: string } } };
    expect(body.error.data.requestId).toBe(noKey.headers.get("x-request-id"));
    expect(body.error.data.requestId).toMatch(UUID);
  });

  it("the answer's log line carries the id, without the query (a GET's input)", async () => {
    const input = encodeURIComponent(JSON.stringify({ filters: { runId: "secret-run" } }));
    const res = await request(`/trpc/intents.list?input=${input}`, {
      headers: { ...bearer(stack.keys.viewer), "x-request-id": "log-1" },
    });
    expect(res.status).toBe(200);
    await res.text();
    await expect.poll(() => lines.find((l) => l.request_id === "log-1")).toBeDefined();
    expect(lines.find((l) => l.request_id === "log-1")).toMatchObject({
      msg: "request",
      level: 20,
      method: "GET",
      path: "/trpc/intents.list",
      status: 200,
      duration_ms: expect.any(Number),
    });
    expect(JSON.stringify(lines)).not.toContain("secret-run");
    // Answered reads are at debug (the dashboard polls them); refusals and writes at info.
    const refused = await request(`/trpc/intents.list?input=${encodeURIComponent('{"bogus":1}')}`, {
      headers: { ...bearer(stack.keys.viewer), "x-request-id": "log-2" },
    });
    expect(refused.status).toBe(400);
    await expect.poll(() => lines.find((l) => l.request_id === "log-2")).toMatchObject({ level: 30, status: 400 });
    // Health checks are logged at debug level.
    await request("/healthz", { headers: { "x-request-id": "health-1" } });
    await expect.poll(() => lines.find((l) => l.request_id === "health-1")).toMatchObject({ level: 20, status: 200 });
  });
});
