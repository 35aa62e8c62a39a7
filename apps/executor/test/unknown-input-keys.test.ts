/**
 * An input with an unknown key (issue 22 §2) is refused naming the key and the keys the input allows,
 * at every strict input: tRPC procedures (400 BAD_REQUEST, nothing read or written), a tool call's
 * arguments over tRPC and MCP (INVALID_ARGUMENTS, nothing sent), catalog declarations.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildCatalog } from "../src/catalog/load.ts";
import { refundArgs, refundTool } from "../src/demo/remotes/index.ts";
import { envelopeOf, mcpClient } from "./mcp-support.ts";
import { startStack, type TestStack } from "./support.ts";

let stack: TestStack;
beforeAll(async () => {
  // Strict arguments: a key the tool does not declare is refused, not dropped.
  stack = await startStack({ tools: (remote) => [refundTool(remote, { args: refundArgs.strict() })] });
});
afterAll(async () => {
  await stack?.close();
});

const EXECUTE_KEYS = "runId, stepId, tool, args, deadlineEpochMs, budgetMs, confirmationToken, tenant";

describe("tRPC procedures: 400 naming the unknown key and the allowed keys", () => {
  it("intents.list with a filter at the top (the newcomer's mistake)", async () => {
    const res = await stack.get("intents.list", { resolution: "UNKNOWN" });
    expect(res.status).toBe(400);
    expect(res.json.error.message).toBe(
      'input: unknown key "resolution"; allowed keys: filters, cursor, limit, tenant',
    );
    expect(res.json.error.data).toMatchObject({ code: "BAD_REQUEST", httpStatus: 400, field: "resolution" });
  });

  it("intents.list with an unknown filter: the filters' own keys", async () => {
    const res = await stack.get("intents.list", { filters: { resolution: "found", outcome: "x" } });
    expect(res.status).toBe(400);
    expect(res.json.error.message).toMatch(/^filters: unknown key "outcome"; allowed keys: tool, status, resolution, /);
    expect(res.json.error.message).toContain("runId");
    expect(res.json.error.data.field).toBe("filters.outcome");
  });

  it("calls.execute with an unknown key: refused before anything is recorded or sent", async () => {
    const before = stack.remote.effects.length;
    const res = await stack.post("calls.execute", {
      runId: "run-unknown-key",
      stepId: "s1",
      tool: "issue_refund",
      args: { order_id: "A-1", amount: 5 },
      deadline: Date.now() + 10_000,
    });
    expect(res.status).toBe(400);
    expect(res.json.error.message).toBe(`input: unknown key "deadline"; allowed keys: ${EXECUTE_KEYS}`);
    expect(res.json.error.data).toMatchObject({ code: "BAD_REQUEST", field: "deadline" });
    expect(stack.remote.effects.length).toBe(before);
    const listed = await stack.get("intents.list", { filters: { runId: "run-unknown-key" } });
    expect(listed.json.result.data.items).toEqual([]);
  });

  it("a misspelt key: the unknown key is named, not only the key it leaves missing", async () => {
    const res = await stack.post("calls.execute", { runid: "r", tool: "issue_refund", args: {} });
    expect(res.status).toBe(400);
    expect(res.json.error.message).toBe(`input: unknown key "runid"; allowed keys: ${EXECUTE_KEYS}`);
  });

  it("runs.abort with an unknown key does not abort: the run's next call goes through", async () => {
    const res = await stack.post("runs.abort", { runId: "run-not-aborted", why: "x", budgetMs: 8000 });
    expect(res.status).toBe(400);
    expect(res.json.error.message).toBe(
      'input: unknown key "why"; allowed keys: runId, deadlineEpochMs, budgetMs, reason, tenant',
    );
    const call = await stack.post("calls.execute", {
      runId: "run-not-aborted",
      stepId: "s1",
      tool: "issue_refund",
      args: { order_id: "A-2", amount: 5 },
    });
    expect(call.json.result.data.status).toBe("SUCCEEDED");
  });

  it("queue.list and queue.resolve: the input is checked before any record is looked up", async () => {
    const list = await stack.get("queue.list", { tool: "issue", page: 2 });
    expect(list.status).toBe(400);
    expect(list.json.error.message).toBe('input: unknown key "page"; allowed keys: tool, cursor, limit, tenant');
    const resolve = await stack.post(
      "queue.resolve",
      {
        key: "0".repeat(32),
        action: "confirm_effect",
        note: "checked",
        expectedVersion: 1,
        operatorActionId: "op-unknown-key-1",
        force: true,
      },
      stack.keys.operator,
    );
    // An unknown record would be 404: the 400 shows the input was refused first.
    expect(resolve.status).toBe(400);
    expect(resolve.json.error.message).toMatch(/^input: unknown key "force"; allowed keys: key, action, /);
  });

  it("a tool call's arguments: INVALID_ARGUMENTS naming the key and the tool's fields, nothing sent", async () => {
    const before = stack.remote.effects.length;
    const res = await stack.post("calls.execute", {
      runId: "run-unknown-arg",
      stepId: "s1",
      tool: "issue_refund",
      args: { order_id: "A-3", amount: 5, note: "x" },
    });
    expect(res.status).toBe(400);
    expect(res.json.error.message).toContain('unknown key "note"; allowed keys: order_id, amount, currency, reason');
    expect(stack.remote.effects.length).toBe(before);
  });
});

describe("MCP tools/call", () => {
  it("an unknown argument: a tool error (isError) naming the key and the allowed keys, nothing sent or recorded", async () => {
    const client = await mcpClient(stack.service.url, stack.keys.agent);
    try {
      const before = stack.remote.effects.length;
      const result = await client.callTool({
        name: "issue_refund",
        arguments: { order_id: "A-4", amount: 5, memo: "x" },
        _meta: { "io.tristate/runId": "run-mcp-unknown-arg" },
      });
      expect(result.isError).toBe(true);
      const envelope = envelopeOf(result);
      expect(envelope).toMatchObject({ status: "FAILED_NO_EFFECT", error: { code: "INVALID_ARGUMENTS" } });
      expect(envelope.error.message).toContain('unknown key "memo"; allowed keys: order_id, amount, currency, reason');
      expect(stack.remote.effects.length).toBe(before);
      const listed = await stack.get("intents.list", { filters: { runId: "run-mcp-unknown-arg" } });
      expect(listed.json.result.data.items).toEqual([]);
    } finally {
      await client.close();
    }
  });
});

describe("catalog declarations", () => {
  it("an unknown field lists the declaration's fields", async () => {
    const declaration = {
      name: "refund",
      kind: "idempotent_by_key",
      method: "POST",
      url: "http://127.0.0.1:1/refunds",
      timeoutMs: 5000,
      args: [{ name: "order_id", type: "string", required: true }],
      identity: { order_id: "upper" },
      timeout: 5,
    };
    const error = await buildCatalog({ httpTools: [declaration] }).catch((e: Error) => e);
    expect(String((error as Error).message)).toMatch(
      /^catalog: tool "refund": timeout: unknown field; allowed fields: name, [^;]*timeoutMs/,
    );
  });
});
