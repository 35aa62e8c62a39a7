/**
 * Issue 20 §3 (DESIGN.md rule 15): over MCP without `io.tristate/runId`, the run outlives the server's
 * own memory. The SDK's real `Client` against the executor's `/mcp` on PostgreSQL: a refund, then the
 * session lost (the service restarted on the same database, another replica, the key's session limit),
 * the client reconnects as the protocol says and repeats: one effect at the remote, the repeat a
 * replay of the first. A session with a call in flight is never ended under it. At a window edge (the
 * gateway on the same database with its clock set either side of it), the repeat still finds the first.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ApiKeyStore, createTestDatabase, type TestDatabase } from "@tristate/db";
import { type FakeRemote, refundTool, startFakeRemote } from "@tristate/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Env, readEnv } from "../src/env.ts";
import { createLogger } from "../src/logger.ts";
import { scopeRuns } from "../src/mcp/default-scope.ts";
import { createGatewayServer } from "../src/mcp/gateway-server.ts";
import { MAX_SESSIONS_PER_KEY } from "../src/mcp/http.ts";
import { type RunningService, startService } from "../src/service.ts";
import { envelopeOf, mcpClient, rawInitialize } from "./mcp-support.ts";

let db: TestDatabase;
let remote: FakeRemote;
let env: Env;
let agentKey: string;
let agentKeyId: string;
const running: RunningService[] = [];
const clients: Client[] = [];

/** `held_refund`: the refund, held before it sends until the test opens the gate (a call in flight). */
let gate = { entered: false, open: () => {}, opened: Promise.resolve() };
const holdNextRefund = () => {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  gate = { entered: false, open, opened };
};
const start = async () => {
  const refund = refundTool(remote, { timeoutMs: 15_000 });
  const held = refundTool(remote, {
    name: "held_refund",
    timeoutMs: 60_000,
    invoke: async (args, ctx) => {
      gate.entered = true;
      await gate.opened;
      return refund.invoke(args, ctx);
    },
  });
  const service = await startService(env, { tools: [refund, held] });
  running.push(service);
  return service;
};
const stop = async (service: RunningService) => {
  await service.close();
  running.splice(running.indexOf(service), 1);
};
const connect = async (service: RunningService) => {
  const client = await mcpClient(service.url, agentKey);
  clients.push(client);
  return client;
};
const refund = (client: Client, orderId: string, options: { timeout?: number } = {}) =>
  client.callTool(
    { name: "issue_refund", arguments: { order_id: orderId, amount: "12.50", currency: "EUR" } },
    undefined,
    options,
  );
const effectsOf = (orderId: string) =>
  remote.effects.filter((e) => String(e.body.order_id).toUpperCase() === orderId).length;

beforeAll(async () => {
  db = await createTestDatabase();
  remote = await startFakeRemote();
  env = readEnv({
    DATABASE_URL: db.url,
    PORT: "0",
    LOG_LEVEL: "silent",
    TRISTATE_SWEEP_INTERVAL_MS: "0",
    TRISTATE_ROLLUP_INTERVAL_MS: "0",
  });
  const first = await start();
  const made = await new ApiKeyStore(first.services.store.prisma).create({ name: "scope agent", role: "agent" });
  agentKey = made.secret;
  agentKeyId = made.info.id;
}, 60_000);
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  for (const service of [...running]) await service.close();
  await remote?.close();
  await db?.drop();
});

describe("MCP default scope: the key and a window, never the session (rule 15)", () => {
  it("restart: the service stopped and started again on the same database; the client's new session repeats the refund: a replay, one effect", async () => {
    const before = running[0] as RunningService;
    const client = await connect(before);
    const first = envelopeOf(await refund(client, "R-RESTART"));
    expect(first).toMatchObject({ status: "SUCCEEDED", replayed: false });
    await stop(before);
    const after = await start();
    // The old session is gone with the process: the client is told 404 and opens a new session.
    const again = await connect(after);
    const repeat = envelopeOf(await refund(again, "r-restart"));
    expect(repeat).toMatchObject({ status: "SUCCEEDED", replayed: true, idempotency_key: first.idempotency_key });
    expect(repeat.result).toEqual(first.result);
    expect(effectsOf("R-RESTART")).toBe(1);
    // The record's run is the key's scope, not a session: what the operator sees.
    const record = await after.services.db.reads("default").getIntent(first.idempotency_key);
    const { current, neighbour } = scopeRuns(agentKeyId, Date.now(), env.TRISTATE_MCP_DEFAULT_SCOPE_MS);
    expect([current, neighbour]).toContain(record?.record.runId);
    expect(record?.record.stepId).toMatch(/^mcp:issue_refund:[0-9a-f]{16}$/);
  });

  it("two replicas on one database: the call on one, its repeat on the other: a replay, one effect", async () => {
    const a = running[0] as RunningService;
    const b = await start();
    const first = envelopeOf(await refund(await connect(a), "R-REPLICA"));
    const repeat = envelopeOf(await refund(await connect(b), "R-REPLICA"));
    expect(first).toMatchObject({ status: "SUCCEEDED", replayed: false });
    expect(repeat).toMatchObject({ status: "SUCCEEDED", replayed: true, idempotency_key: first.idempotency_key });
    expect(effectsOf("R-REPLICA")).toBe(1);
    await stop(b);
  });

  it("the key's session limit ends the client's session (404); its repeat in a new session: a replay, one effect", async () => {
    const service = running[0] as RunningService;
    const client = await connect(service);
    const first = envelopeOf(await refund(client, "R-EVICTED"));
    for (let i = 0; i < MAX_SESSIONS_PER_KEY; i++) {
      expect((await rawInitialize(service.url, `Bearer ${agentKey}`)).status).toBe(200);
    }
    await expect(refund(client, "R-EVICTED")).rejects.toThrow(/404|session not found/i);
    const repeat = envelopeOf(await refund(await connect(service), "R-EVICTED"));
    expect(repeat).toMatchObject({ status: "SUCCEEDED", replayed: true, idempotency_key: first.idempotency_key });
    expect(effectsOf("R-EVICTED")).toBe(1);
  });

  it("a session with a call in flight is never ended by the key's session limit: the call's answer reaches the client", async () => {
    const service = running[0] as RunningService;
    // A key of its own: its session is the least recently used once the key has opened its limit beside it.
    const made = await new ApiKeyStore(service.services.store.prisma).create({ name: "busy agent", role: "agent" });
    const client = await mcpClient(service.url, made.secret);
    clients.push(client);
    // The refund is held (before it sends) while the key opens its limit of sessions beside the call.
    holdNextRefund();
    const slow = client.callTool(
      { name: "held_refund", arguments: { order_id: "R-INFLIGHT", amount: "12.50", currency: "EUR" } },
      undefined,
      { timeout: 20_000 },
    );
    let settled = false;
    const done = () => {
      settled = true;
    };
    void slow.then(done, done);
    while (!gate.entered) await new Promise((r) => setTimeout(r, 10));
    for (let i = 0; i < MAX_SESSIONS_PER_KEY; i++) {
      expect((await rawInitialize(service.url, `Bearer ${made.secret}`)).status).toBe(200);
    }
    // The call was still in flight when the key's limit was reached (else this test proves nothing).
    expect(settled).toBe(false);
    gate.open();
    const answered = envelopeOf(await slow);
    expect(answered).toMatchObject({ status: "SUCCEEDED", replayed: false });
    // The session is still the client's, and the repeat in it replays.
    const repeat = await client.callTool({
      name: "held_refund",
      arguments: { order_id: "R-INFLIGHT", amount: "12.50", currency: "EUR" },
    });
    expect(envelopeOf(repeat)).toMatchObject({ status: "SUCCEEDED", replayed: true });
    expect(effectsOf("R-INFLIGHT")).toBe(1);
  });
});

describe("MCP default scope at a window edge (the gateway on PostgreSQL, its clock set either side)", () => {
  const windowMs = 60_000;
  const edge = (Math.floor(Date.now() / (2 * windowMs)) + 1) * 2 * windowMs; // the next window edge

  /** A gateway for the agent key whose clock reads `nowEpochMs`, and a real SDK client on it. */
  const gatewayAt = async (service: RunningService, nowEpochMs: number) => {
    const server = createGatewayServer({
      executor: service.services.tenants.executor("default"),
      defaultScope: {
        callerId: agentKeyId,
        windowMs,
        hasRecord: async (key) => (await service.services.db.intents("default").get(key)) !== null,
      },
      now: () => nowEpochMs,
      budget: { maxBudgetMs: env.TRISTATE_MAX_BUDGET_MS, defaultBudgetMs: env.TRISTATE_DEFAULT_BUDGET_MS },
      logger: createLogger("silent"),
      caller: { name: "scope agent", tenant: "default" },
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "edge-agent", version: "1.0.0" });
    await client.connect(clientSide);
    clients.push(client);
    return client;
  };

  it.each([
    ["a second before the edge, its repeat a second after", -1000, 1000],
    ["a replica ahead calls after the edge, the repeat on one behind before it", 1000, -1000],
    ["just before the edge, the repeat a whole window later", -1, windowMs - 2],
  ])("%s: one effect, the repeat a replay", async (_, firstAt, repeatAt) => {
    const service = running[0] as RunningService;
    const order = `R-EDGE${firstAt}${repeatAt}`;
    const first = envelopeOf(await refund(await gatewayAt(service, edge + firstAt), order));
    const repeat = envelopeOf(await refund(await gatewayAt(service, edge + repeatAt), order));
    expect(first).toMatchObject({ status: "SUCCEEDED", replayed: false });
    expect(repeat).toMatchObject({ status: "SUCCEEDED", replayed: true, idempotency_key: first.idempotency_key });
    expect(effectsOf(order)).toBe(1);
    // Two scope periods apart, the same identity is a new call (the documented window).
    const later = envelopeOf(await refund(await gatewayAt(service, edge + firstAt + 4 * windowMs), order));
    expect(later).toMatchObject({ status: "SUCCEEDED", replayed: false });
    expect(effectsOf(order)).toBe(2);
  });

  it("TRISTATE_MCP_DEFAULT_SCOPE_MS: 24 h by default (also when empty); refuses what is not 1 min–30 days", () => {
    expect(readEnv({}).TRISTATE_MCP_DEFAULT_SCOPE_MS).toBe(86_400_000);
    expect(readEnv({ TRISTATE_MCP_DEFAULT_SCOPE_MS: "" }).TRISTATE_MCP_DEFAULT_SCOPE_MS).toBe(86_400_000);
    expect(readEnv({ TRISTATE_MCP_DEFAULT_SCOPE_MS: "3600000" }).TRISTATE_MCP_DEFAULT_SCOPE_MS).toBe(3_600_000);
    for (const bad of ["59999", "2592000001", "1.5", "a day"]) {
      expect(() => readEnv({ TRISTATE_MCP_DEFAULT_SCOPE_MS: bad })).toThrow(/TRISTATE_MCP_DEFAULT_SCOPE_MS/);
    }
  });

  it("scopeRuns: windows twice the setting, the nearest neighbour looked up; a bad window is refused", () => {
    const at = (t: number) => scopeRuns("k", t, windowMs);
    expect(at(edge - 1).current).not.toBe(at(edge).current);
    expect(at(edge - 1).neighbour).toBe(at(edge).current);
    expect(at(edge).neighbour).toBe(at(edge - 1).current);
    expect(at(edge + windowMs).neighbour).toBe(at(edge + 2 * windowMs).current);
    expect(at(edge).current).toBe(`mcp-k-${new Date(edge).toISOString()}`);
    expect(() => scopeRuns("k", edge, 0)).toThrow(/windowMs/);
  });
});
