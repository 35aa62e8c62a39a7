/**
 * A declarative HTTP tool refuses an argument key it does not declare (issue 22: `reasn` was dropped
 * and the refund sent without its reason): FAILED_NO_EFFECT `INVALID_ARGUMENTS` naming the unknown
 * key and the declared ones, nothing recorded or sent, over tRPC and MCP; a misspelt required key names
 * the unknown key too; MCP tools/list says `additionalProperties: false`; a declaration with
 * `additionalProperties: true` still takes extra keys (its explicit opt-out).
 */
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildCatalog, loadCatalog } from "../src/catalog/load.ts";
import { readEnv } from "../src/env.ts";
import { envelopeOf, mcpClient } from "./mcp-support.ts";
import { startStack, type TestStack } from "./support.ts";

const refund = (url: string, name: string, extra?: boolean) => ({
  name,
  kind: "idempotent_by_key",
  method: "POST",
  url: `${url}/effects`,
  args: {
    type: "object",
    properties: {
      order_id: { type: "string" },
      amount: { type: "number" },
      currency: { type: "string" },
      reason: { type: "string" },
    },
    required: ["order_id", "amount", "currency"],
    ...(extra === undefined ? {} : { additionalProperties: extra }),
  },
  identity: { order_id: "upper", amount: "decimal:2" },
  timeoutMs: 1500,
  keyProbe: { url: `${url}/effects?clientRef={key}`, found: { type: "non_empty_array" } },
});
const listed = (url: string) => ({
  name: "reverse_refund",
  kind: "idempotent_by_key",
  method: "POST",
  url: `${url}/effects`,
  args: [{ name: "refund_id", type: "string" }],
  identity: { refund_id: "exact" },
  timeoutMs: 1500,
  keyProbe: { url: `${url}/effects?clientRef={key}`, found: { type: "non_empty_array" } },
});

const ALLOWED = "allowed keys: order_id, amount, currency, reason";

let stack: TestStack;
beforeAll(async () => {
  stack = await startStack({
    tools: (remote) =>
      buildCatalog({
        httpTools: [refund(remote.url, "issue_refund"), refund(remote.url, "loose_refund", true), listed(remote.url)],
      }),
  });
});
afterAll(async () => {
  await stack?.close();
});

async function nothingFor(runId: string, before: number) {
  expect(stack.remote.effects.length).toBe(before);
  const items = await stack.get("intents.list", { filters: { runId } });
  expect(items.json.result.data.items).toEqual([]);
}

describe("tRPC calls.execute", () => {
  it("a misspelt optional key (reasn): INVALID_ARGUMENTS naming it and the declared keys, nothing sent", async () => {
    const before = stack.remote.effects.length;
    const res = await stack.post("calls.execute", {
      runId: "run-reasn",
      tool: "issue_refund",
      args: { order_id: "B-2006", amount: 2, currency: "EUR", reasn: "damaged" },
    });
    expect(res.status).toBe(400);
    expect(res.json.error.message).toContain(`unknown key "reasn"; ${ALLOWED}`);
    await nothingFor("run-reasn", before);
  });

  it("a misspelt required key (order_idd): the unknown key is named, not only the missing order_id", async () => {
    const res = await stack.post("calls.execute", {
      runId: "run-order-idd",
      tool: "issue_refund",
      args: { order_idd: "B-2006", amount: 2, currency: "EUR" },
    });
    expect(res.status).toBe(400);
    expect(res.json.error.message).toContain(`unknown key "order_idd"; ${ALLOWED}`);
  });

  it("a list-form declaration is strict too", async () => {
    const res = await stack.post("calls.execute", {
      runId: "run-list",
      tool: "reverse_refund",
      args: { refund_id: "r-1", note: "x" },
    });
    expect(res.status).toBe(400);
    expect(res.json.error.message).toContain('unknown key "note"; allowed keys: refund_id');
  });

  it("additionalProperties: true opts out: the extra key is taken", async () => {
    const res = await stack.post("calls.execute", {
      runId: "run-loose",
      tool: "loose_refund",
      args: { order_id: "B-7", amount: 2, currency: "EUR", memo: "x" },
    });
    expect(res.json.result.data.status).toBe("SUCCEEDED");
  });
});

describe("MCP", () => {
  it("tools/call with reasn: FAILED_NO_EFFECT INVALID_ARGUMENTS, nothing sent; tools/list: additionalProperties false", async () => {
    const client = await mcpClient(stack.service.url, stack.keys.agent);
    try {
      const before = stack.remote.effects.length;
      const result = await client.callTool({
        name: "issue_refund",
        arguments: { order_id: "B-2006", amount: 2, currency: "EUR", reasn: "damaged" },
        _meta: { "io.tristate/runId": "run-mcp-reasn" },
      });
      expect(result.isError).toBe(true);
      const envelope = envelopeOf(result);
      expect(envelope).toMatchObject({ status: "FAILED_NO_EFFECT", error: { code: "INVALID_ARGUMENTS" } });
      expect(envelope.error.message).toContain(`unknown key "reasn"; ${ALLOWED}`);
      await nothingFor("run-mcp-reasn", before);
      const tools = (await client.listTools()).tools;
      const schemaOf = (name: string) => tools.find((t) => t.name === name)?.inputSchema;
      expect(schemaOf("issue_refund")).toMatchObject({ additionalProperties: false });
      expect(schemaOf("reverse_refund")).toMatchObject({ additionalProperties: false });
      expect(schemaOf("loose_refund")?.additionalProperties).not.toBe(false);
    } finally {
      await client.close();
    }
  });
});

describe("the example catalog (tristate.config.ts)", () => {
  it("issue_refund, reverse_refund and send_email refuse an unknown key", async () => {
    const config = resolve(import.meta.dirname, "../../../tristate.config.ts");
    const tools = await loadCatalog(config, readEnv({}));
    const args = {
      issue_refund: { order_id: "B-2006", amount: 2, currency: "EUR", reasn: "x" },
      reverse_refund: { refund_id: "r-1", reasn: "x" },
      send_email: { to: "a@example.com", template_id: "t", reasn: "x" },
    };
    for (const [name, value] of Object.entries(args)) {
      const tool = tools.find((t) => t.name === name);
      const parsed = tool?.args?.safeParse(value);
      expect(parsed?.success, name).toBe(false);
      expect(parsed?.error?.issues[0]?.message, name).toMatch(/^unknown key "reasn"; allowed keys: /);
    }
  });
});
