/**
 * Tristate as an MCP server over Streamable HTTP (issue 11 §3): the SDK's real `Client` against the
 * running executor on PostgreSQL, in front of an upstream MCP ticket desk started by the test.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { CallToolResultSchema, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { ApiKeyStore } from "@tristate/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDesk, startTicketHttpServer, type TicketHttpServer } from "./fixtures/ticket-mcp.ts";
import { envelopeOf, mcpClient, rawInitialize, ticketTools } from "./mcp-support.ts";
import { startStack, type TestStack } from "./support.ts";

let stack: TestStack;
let desk: TicketHttpServer;
const clients: Client[] = [];
const connect = async (key: string) => {
  const client = await mcpClient(stack.service.url, key);
  clients.push(client);
  return client;
};
const ticketsAbout = (subject: string) => desk.desk.tickets.filter((t) => t.subject === subject);

beforeAll(async () => {
  desk = await startTicketHttpServer(createDesk());
  const tools = await ticketTools({ url: desk.url });
  stack = await startStack({ tools: () => tools, env: { TRISTATE_AUTH_FAILURES: "5" } });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await stack?.close();
  await desk?.close();
});

describe("MCP gateway over Streamable HTTP at /mcp", () => {
  it("lists the catalog: MCP tool names are catalog names, inputSchema is tools.list's JSON Schema, outputSchema the Envelope", async () => {
    const client = await connect(stack.keys.agent);
    const { tools } = await client.listTools();
    const catalog = (await stack.get("tools.list", undefined, stack.keys.agent)).json.result.data as {
      name: string;
      argsJsonSchema: unknown;
    }[];
    expect(tools.map((t) => t.name).sort()).toEqual(catalog.map((t) => t.name).sort());
    for (const tool of tools) {
      expect(tool.inputSchema).toEqual(catalog.find((c) => c.name === tool.name)?.argsJsonSchema);
      expect(tool.outputSchema?.required).toEqual(expect.arrayContaining(["status", "retry_safe", "message"]));
    }
    // /trpc is undisturbed beside /mcp.
    expect((await stack.post("calls.execute", { runId: "r", stepId: "s", tool: "nope", args: {} })).status).toBe(404);
  });

  it("auth: no key 401, a bad key 401 (the SDK client cannot connect), a viewer key 403; nothing is called", async () => {
    const none = await rawInitialize(stack.service.url, null);
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect((await rawInitialize(stack.service.url, "Bearer ts_agent_not-a-real-key-000000")).status).toBe(401);
    await expect(mcpClient(stack.service.url, "ts_agent_not-a-real-key-000000")).rejects.toMatchObject({ code: 401 });
    const viewer = await rawInitialize(stack.service.url, `Bearer ${stack.keys.viewer}`);
    expect(viewer.status).toBe(403);
    expect(viewer.json.error.message).toMatch(/role viewer/);
    await expect(mcpClient(stack.service.url, stack.keys.operator)).rejects.toMatchObject({ code: 403 });
    expect(desk.desk.calls.open_ticket ?? 0).toBe(0);
  });

  it("a session belongs to its key: another key sending its Mcp-Session-Id gets 404", async () => {
    const opened = await rawInitialize(stack.service.url, `Bearer ${stack.keys.agent}`);
    const sessionId = opened.headers.get("mcp-session-id");
    expect(opened.status).toBe(200);
    expect(sessionId).toBeTruthy();
    const res = await fetch(`${stack.service.url}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${stack.keys.admin}`,
        "mcp-session-id": sessionId ?? "",
        "mcp-protocol-version": "2025-06-18",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }),
    });
    expect(res.status).toBe(404);
  });

  it("a call answers the Envelope as structuredContent; the same tool and identity again in the session replays; one effect", async () => {
    const client = await connect(stack.keys.agent);
    await client.listTools(); // the client then validates structuredContent against the outputSchema
    const first = await client.callTool({ name: "open_ticket", arguments: { subject: "printer on fire" } });
    expect(first.isError).toBeFalsy();
    expect(envelopeOf(first)).toMatchObject({ status: "SUCCEEDED", retry_safe: true, replayed: false, attempt: 1 });
    expect(envelopeOf(first).result.ticket).toMatchObject({
      subject: "printer on fire",
      ref: envelopeOf(first).idempotency_key,
    });
    expect((first.content as { text: string }[])[0]?.text).toBe(envelopeOf(first).message);
    const again = await client.callTool({ name: "open_ticket", arguments: { subject: "  printer on fire " } });
    expect(envelopeOf(again)).toMatchObject({
      status: "SUCCEEDED",
      replayed: true,
      idempotency_key: envelopeOf(first).idempotency_key,
    });
    expect(ticketsAbout("printer on fire")).toHaveLength(1);
  });

  it("_meta run and step are honoured: the record carries them; naming two steps makes two deliberate effects", async () => {
    const client = await connect(stack.keys.agent);
    const call = (stepId: string) =>
      client.callTool({
        name: "open_ticket",
        arguments: { subject: "new laptop" },
        _meta: { "io.tristate/runId": "run-meta-1", "io.tristate/stepId": stepId },
      });
    const a = envelopeOf(await call("order-1"));
    const b = envelopeOf(await call("order-2"));
    const aAgain = envelopeOf(await call("order-1"));
    expect([a.status, b.status, aAgain.status]).toEqual(["SUCCEEDED", "SUCCEEDED", "SUCCEEDED"]);
    expect(a.idempotency_key).not.toBe(b.idempotency_key);
    expect(aAgain).toMatchObject({ replayed: true, idempotency_key: a.idempotency_key });
    expect(ticketsAbout("new laptop")).toHaveLength(2);
    const record = await stack.get("calls.get", { key: a.idempotency_key }, stack.keys.agent);
    expect(record.json.result.data).toMatchObject({ runId: "run-meta-1", stepId: "order-1", tool: "open_ticket" });
    // Without _meta the run is the key's default scope (its id and a window), never the session.
    const plain = envelopeOf(await client.callTool({ name: "open_ticket", arguments: { subject: "session run" } }));
    const plainRecord = (await stack.get("calls.get", { key: plain.idempotency_key }, stack.keys.agent)).json.result
      .data;
    expect(plainRecord.runId).toMatch(/^mcp-[0-9a-f-]{36}-\d{4}-\d\d-\d\dT00:00:00\.000Z$/);
    expect(plainRecord.stepId).toMatch(/^mcp:open_ticket:[0-9a-f]{16}$/);
    // A bad step id is a JSON-RPC invalid-params error naming the _meta key; nothing is called.
    const calls = desk.desk.calls.open_ticket;
    const bad = client.callTool({
      name: "open_ticket",
      arguments: { subject: "x" },
      _meta: { "io.tristate/stepId": "compensate:x" },
    });
    await expect(bad).rejects.toThrow(/io\.tristate\/stepId/);
    expect(desk.desk.calls.open_ticket).toBe(calls);
  });

  it("tenant isolation: two tenants' agents calling the same tool, run, step and identity make two effects, neither a replay", async () => {
    const keys = new ApiKeyStore(stack.service.services.store.prisma);
    const acme = (await keys.create({ name: "acme bot", role: "agent", tenant: "acme" })).secret;
    const globex = (await keys.create({ name: "globex bot", role: "agent", tenant: "globex" })).secret;
    const meta = { "io.tristate/runId": "shared-run", "io.tristate/stepId": "shared-step" };
    const args = { subject: "tenant twins" };
    const a = envelopeOf(await (await connect(acme)).callTool({ name: "open_ticket", arguments: args, _meta: meta }));
    const g = envelopeOf(await (await connect(globex)).callTool({ name: "open_ticket", arguments: args, _meta: meta }));
    expect(a).toMatchObject({ status: "SUCCEEDED", replayed: false });
    expect(g).toMatchObject({ status: "SUCCEEDED", replayed: false });
    expect(a.idempotency_key).not.toBe(g.idempotency_key);
    expect(ticketsAbout("tenant twins")).toHaveLength(2);
    // Each tenant's record is its own: the other's key is 404 to it.
    expect((await stack.get("calls.get", { key: g.idempotency_key }, acme)).status).toBe(404);
  });

  it("timeout, cancel, repeat: the client's -32001 and its repeats make one effect (in flight, then a replay)", async () => {
    const client = await connect(stack.keys.agent);
    desk.desk.answerDelayMs = 1500;
    try {
      const args = { subject: "slow desk" };
      const timedOut = await client
        .callTool({ name: "open_ticket", arguments: args }, undefined, { timeout: 300 })
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(timedOut).toBeInstanceOf(McpError);
      expect((timedOut as McpError).code).toBe(ErrorCode.RequestTimeout);
      // The repeat while the first call is still running: UNKNOWN in flight, not safe to retry, nothing sent.
      const during = await client.callTool({ name: "open_ticket", arguments: args });
      expect(during.isError).toBe(true);
      expect(envelopeOf(during)).toMatchObject({ status: "UNKNOWN", retry_safe: false });
      expect(envelopeOf(during).error.code).toBe("IN_FLIGHT");
      expect((during.content as { text: string }[])[0]?.text).toBe(envelopeOf(during).message);
      await new Promise((r) => setTimeout(r, 2000));
      const after = await client.callTool({ name: "open_ticket", arguments: args });
      expect(envelopeOf(after)).toMatchObject({ status: "SUCCEEDED", replayed: true });
      expect(ticketsAbout("slow desk")).toHaveLength(1);
    } finally {
      desk.desk.answerDelayMs = 0;
    }
  });

  it("arguments the catalog refuses are an isError FAILED_NO_EFFECT envelope naming the field; an unknown tool is -32602", async () => {
    const client = await connect(stack.keys.agent);
    const bad = await client.callTool({ name: "open_ticket", arguments: { subject: 42 } });
    expect(bad.isError).toBe(true);
    expect(envelopeOf(bad)).toMatchObject({ status: "FAILED_NO_EFFECT", retry_safe: true });
    expect(envelopeOf(bad).error).toMatchObject({ code: "INVALID_ARGUMENTS", field: "subject" });
    // NUL is a text rule the arguments break: a correctable tool result too, not a protocol error.
    const nul = await client.callTool({ name: "open_ticket", arguments: { subject: "a\u0000b" } });
    expect(nul.isError).toBe(true);
    expect(envelopeOf(nul)).toMatchObject({ status: "FAILED_NO_EFFECT", retry_safe: true, idempotency_key: "" });
    expect(envelopeOf(nul).error).toMatchObject({ code: "INVALID_ARGUMENTS", field: "subject" });
    // A protocol error's message carries the JSON-RPC code once ("MCP error -32602: unknown tool …").
    const unknown = await client.callTool({ name: "no_such_tool", arguments: {} }).then(
      () => null,
      (error: Error & { code?: number }) => error,
    );
    expect(unknown?.code).toBe(-32602);
    expect(unknown?.message).toMatch(/^MCP error -32602: unknown tool "no_such_tool"/);
    expect(unknown?.message.match(/MCP error/g)).toHaveLength(1);
    // A malformed tools/call (arguments not an object, no name) is -32602 invalid params, never
    // -32603 internal error (which a caller must read as "maybe it ran").
    for (const params of [{ name: "open_ticket", arguments: "x" }, { arguments: {} }, { name: 5 }]) {
      const refused = await client.request({ method: "tools/call", params } as never, CallToolResultSchema).then(
        () => null,
        (error: Error & { code?: number }) => error,
      );
      expect(refused?.code, JSON.stringify(params)).toBe(-32602);
    }
    expect(ticketsAbout("x")).toHaveLength(0);
  });

  it("bad keys are throttled per address like /trpc's (429 with Retry-After); a valid key still gets in", async () => {
    let last = 0;
    for (let i = 0; i < 8 && last !== 429; i++) {
      const res = await rawInitialize(stack.service.url, "Bearer ts_agent_not-a-real-key-000000");
      last = res.status;
      if (last === 429) expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    }
    expect(last).toBe(429);
    expect((await stack.post("calls.execute", {}, "ts_agent_not-a-real-key-000000")).status).toBe(429);
    const client = await connect(stack.keys.agent);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });
});
