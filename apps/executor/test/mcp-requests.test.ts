/**
 * MCP requests refused before anything runs (issue 21 §4, §7), over raw HTTP against real
 * PostgreSQL, effects counted at the remote: a batch over `TRISTATE_MAX_BATCH_CALLS` is refused
 * whole; `tools/call` without `params` is -32602 with a message (not -32603 with a validation dump);
 * a body that is not UTF-8 is refused naming the body; a number JSON would round is refused naming
 * the field unless the tool declares it a string.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawInitialize } from "./mcp-support.ts";
import { type Json, startStack, type TestStack } from "./support.ts";

let stack: TestStack;
let session: string;
beforeAll(async () => {
  stack = await startStack({ env: { TRISTATE_MAX_BATCH_CALLS: "20" } });
  const init = await rawInitialize(stack.service.url, `Bearer ${stack.keys.agent}`);
  session = init.headers.get("mcp-session-id") ?? "";
  expect(session).not.toBe("");
  await post({ jsonrpc: "2.0", method: "notifications/initialized" });
});
afterAll(async () => {
  await stack?.close();
});

async function post(body: unknown) {
  const res = await fetch(`${stack.service.url}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${stack.keys.agent}`,
      "mcp-session-id": session,
      "mcp-protocol-version": "2025-06-18",
    },
    body: typeof body === "string" || Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: (text ? JSON.parse(text) : null) as Json };
}

const refundCall = (id: number, order: string) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: {
    name: "issue_refund",
    arguments: { order_id: order, amount: 5 },
    _meta: { "io.tristate/runId": "run-mcp-req", "io.tristate/stepId": `s-${id}` },
  },
});

describe("MCP batches and malformed calls", () => {
  it("a batch of 60 tools/call is refused whole (400), none of them runs", async () => {
    const before = stack.remote.effects.length;
    const res = await post(Array.from({ length: 60 }, (_, i) => refundCall(100 + i, `BATCH-${i}`)));
    expect(res.status).toBe(400);
    expect(res.json.error.message).toMatch(/at most 20 messages \(TRISTATE_MAX_BATCH_CALLS\); this one has 60/);
    expect(stack.remote.effects.length - before).toBe(0);
  });

  it("tools/call without params is -32602 with a message, nothing run", async () => {
    const res = await post({ jsonrpc: "2.0", id: 7, method: "tools/call" });
    expect(res.json.error, JSON.stringify(res.json)).toMatchObject({ code: -32602 });
    expect(res.json.error.message).toMatch(/^tools\/call: params: /);
    expect(res.json.error.message).not.toMatch(/"code":|invalid_type|\[\s*\{/);
    for (const params of [{ name: "issue_refund", arguments: "x" }, { arguments: {} }, { name: 5 }]) {
      const refused = await post({ jsonrpc: "2.0", id: 11, method: "tools/call", params });
      expect(refused.json.error, JSON.stringify(params)).toMatchObject({ code: -32602 });
      expect(refused.json.error.message).toMatch(/^tools\/call: params\.(arguments|name): [^\n]+$/);
    }
  });
});

describe("MCP bodies are read exactly", () => {
  it("a body that is not UTF-8 is refused (400) naming the body, nothing run", async () => {
    const before = stack.remote.effects.length;
    const text = JSON.stringify(refundCall(8, "UTF-@"));
    const at = text.indexOf("@");
    const bytes = Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from([0xff]), Buffer.from(text.slice(at + 1))]);
    const res = await post(bytes);
    expect(res.status).toBe(400);
    expect(res.json.error.message).toMatch(/body: must be valid UTF-8/);
    expect(stack.remote.effects.length - before).toBe(0);
  });

  it("an integer beyond 2^53 is taken exactly where the tool takes a string, refused naming the field elsewhere", async () => {
    const before = stack.remote.effects.length;
    const exact = JSON.stringify(refundCall(9, "BIG-1")).replace('"amount":5', '"amount":9007199254740993');
    // refundArgs.amount takes a number or a string: the exact text is taken (canon.decimal reads it exactly).
    const taken = await post(exact);
    expect(taken.json.result.structuredContent).toMatchObject({ status: "SUCCEEDED" });
    expect(stack.remote.effects.at(-1)?.body.amount).toBe("9007199254740993");
    // A number in _meta (the deadline) is a field nobody declares lossless: refused, naming it.
    const meta = JSON.stringify(refundCall(10, "BIG-2")).replace(
      '"io.tristate/runId"',
      '"io.tristate/deadlineEpochMs":9007199254740993,"io.tristate/runId"',
    );
    const refused = await post(meta);
    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatchObject({
      code: -32602,
      data: { field: "params._meta.io.tristate/deadlineEpochMs" },
    });
    expect(stack.remote.effects.length - before).toBe(1);
  });
});
