/**
 * The `notifications.*` procedures over real HTTP on a real PostgreSQL test database (issue 23 §3):
 * admin keys only, the tenant as other admin procedures take it, another tenant's channel 404, inputs
 * strict and refused naming the field; and Tristate's internal tools hidden from agents.
 */
import { defineTool } from "@tristate/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildCatalog } from "../src/catalog/load.ts";
import { mcpClient } from "./mcp-support.ts";
import { LOOPBACK_RECEIVERS } from "./notifications-support.ts";
import { type Json, startStack, type TestStack } from "./support.ts";

let stack: TestStack;
beforeAll(async () => {
  // No delivery loop: these tests read and change channels only.
  stack = await startStack({
    env: {
      // Public hosts (hooks.example.test) and the loopback ones.
      TRISTATE_NOTIFY_ALLOW_HOSTS: `*,${LOOPBACK_RECEIVERS}`,
      TRISTATE_NOTIFY_INTERVAL_MS: "0",
    },
  });
  // A second tenant exists once a key is made in it.
  expect(
    (await stack.post("keys.create", { name: "acme agent", role: "agent", tenant: "acme" }, stack.keys.admin)).status,
  ).toBe(200);
});
afterAll(() => stack?.close());

const create = (input: Record<string, unknown>, key = stack.keys.admin) =>
  stack.post("notifications.channels.create", input, key);

describe("notifications.channels.* and notifications.deliveries.list", () => {
  it("creates a webhook channel and shows its secret once; lists it without the secret", async () => {
    const res = await create({ kind: "webhook", name: "ops hook", url: "http://127.0.0.1:9/hook" });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const { channel, secret } = res.json.result.data;
    expect(secret).toMatch(/^whsec_/);
    expect(channel).toMatchObject({ kind: "webhook", name: "ops hook", tenant: "default", enabled: true });
    expect(channel.id).toMatch(/^nch_/);
    expect(channel.secretPrefix).toBe(secret.slice(0, channel.secretPrefix.length));
    const list = await stack.get("notifications.channels.list", undefined, stack.keys.admin);
    expect(list.status).toBe(200);
    const listed = list.json.result.data.channels.find((c: Json) => c.id === channel.id);
    expect(listed).toBeDefined();
    expect(JSON.stringify(list.json)).not.toContain(secret);
  });

  it("every procedure refuses viewer, operator and agent keys (403) and no key (401)", async () => {
    const { channel } = (await create({ kind: "slack", name: "s", url: "https://hooks.example.test/x" })).json.result
      .data;
    for (const role of ["agent", "viewer", "operator"] as const) {
      const key = stack.keys[role];
      expect((await stack.get("notifications.channels.list", undefined, key)).status).toBe(403);
      expect((await stack.get("notifications.deliveries.list", undefined, key)).status).toBe(403);
      expect((await create({ kind: "webhook", name: "x", url: "http://127.0.0.1:9/" }, key)).status).toBe(403);
      expect((await stack.post("notifications.channels.update", { id: channel.id, enabled: false }, key)).status).toBe(
        403,
      );
      expect((await stack.post("notifications.channels.delete", { id: channel.id }, key)).status).toBe(403);
      expect((await stack.post("notifications.channels.test", { id: channel.id }, key)).status).toBe(403);
    }
    expect((await stack.get("notifications.channels.list", undefined, null)).status).toBe(401);
    // Nothing changed.
    const after = await stack.get("notifications.channels.list", undefined, stack.keys.admin);
    expect(after.json.result.data.channels.find((c: Json) => c.id === channel.id).enabled).toBe(true);
  });

  it("another tenant's channel answers 404 like none; the admin reaches it by naming the tenant", async () => {
    const made = await create({ kind: "email", name: "acme ops", to: ["ops@acme.test"], tenant: "acme" });
    expect(made.status, JSON.stringify(made.json)).toBe(200);
    const { channel } = made.json.result.data;
    expect(channel.tenant).toBe("acme");
    expect(made.json.result.data.secret).toBeNull();
    for (const [path, input] of [
      ["notifications.channels.update", { id: channel.id, name: "mine now" }],
      ["notifications.channels.test", { id: channel.id }],
      ["notifications.channels.delete", { id: channel.id }],
    ] as const) {
      const res = await stack.post(path, input, stack.keys.admin);
      expect(res.status, `${path} ${JSON.stringify(res.json)}`).toBe(404);
      expect(res.json.error.data.field).toBe("id");
    }
    const own = await stack.get("notifications.channels.list", undefined, stack.keys.admin);
    expect(own.json.result.data.channels.some((c: Json) => c.id === channel.id)).toBe(false);
    const named = await stack.post(
      "notifications.channels.update",
      { tenant: "acme", id: channel.id, enabled: false },
      stack.keys.admin,
    );
    expect(named.status).toBe(200);
    expect(named.json.result.data.channel.enabled).toBe(false);
    const tested = await stack.post(
      "notifications.channels.test",
      { tenant: "acme", id: channel.id },
      stack.keys.admin,
    );
    expect(tested.status).toBe(200);
    expect(tested.json.result.data.deliveryId).toMatch(/^ndl_/);
    const log = await stack.get(
      "notifications.deliveries.list",
      { tenant: "acme", channelId: channel.id },
      stack.keys.admin,
    );
    expect(log.json.result.data.items.map((d: Json) => d.id)).toStrictEqual([tested.json.result.data.deliveryId]);
    expect(log.json.result.data.items[0]).toMatchObject({ kind: "test", status: "pending", tenant: "acme" });
    // An unknown tenant is 404 naming the field.
    const ghost = await stack.get("notifications.channels.list", { tenant: "ghost" }, stack.keys.admin);
    expect(ghost.status).toBe(404);
    expect(ghost.json.error.data.field).toBe("tenant");
    expect(
      (await stack.post("notifications.channels.delete", { tenant: "acme", id: channel.id }, stack.keys.admin)).json
        .result.data,
    ).toStrictEqual({ deleted: true });
  });

  it("refuses bad input naming the field", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ kind: "webhook", name: "x" }, "url"],
      [{ kind: "webhook", name: "x", url: "ftp://example.test/" }, "url"],
      [{ kind: "email", name: "x" }, "to"],
      [{ kind: "email", name: "x", to: ["not an address"] }, "to.0"],
      [{ kind: "email", name: "x", to: ["a@b.test"], url: "http://127.0.0.1:9/" }, "url"],
      [{ kind: "slack", name: " ", url: "https://hooks.example.test/x" }, "name"],
      [{ kind: "sms", name: "x" }, "kind"],
      [{ kind: "webhook", name: "x", url: "http://127.0.0.1:9/", events: ["human_queue", "human_queue"] }, "events"],
      [{ kind: "webhook", name: "x", url: "http://127.0.0.1:9/", events: ["test"] }, "events.0"],
      [{ kind: "webhook", name: "x", url: "http://127.0.0.1:9/", secret: "mine" }, "secret"],
    ];
    for (const [input, field] of cases) {
      const res = await create(input);
      expect(res.status, JSON.stringify(input)).toBe(400);
      expect(res.json.error.data.field, JSON.stringify(res.json)).toBe(field);
    }
    const unknownKey = await create({ kind: "webhook", name: "x", url: "http://127.0.0.1:9/", secret: "mine" });
    expect(unknownKey.json.error.message).toContain(
      'unknown key "secret"; allowed keys: tenant, kind, name, url, to, events',
    );
    const noChange = await stack.post("notifications.channels.update", { id: "nch_0" }, stack.keys.admin);
    expect(noChange.status).toBe(400);
    const badId = await stack.post("notifications.channels.delete", { id: "chan-1" }, stack.keys.admin);
    expect(badId.json.error.data.field).toBe("id");
    const badStatus = await stack.get("notifications.deliveries.list", { status: "lost" }, stack.keys.admin);
    expect(badStatus.json.error.data.field).toBe("status");
  });
});

describe("Tristate's internal tools are hidden from agents", () => {
  it("tools.list does not list them; calls.execute refuses them as unknown tools", async () => {
    const tools = (await stack.get("tools.list", undefined, stack.keys.agent)).json.result.data as Json[];
    expect(tools.length).toBeGreaterThan(0);
    expect(tools.some((t) => t.name.startsWith("tristate."))).toBe(false);
    for (const tool of ["tristate.notify.webhook", "tristate.notify.slack", "tristate.notify.email"]) {
      const res = await stack.post("calls.execute", {
        runId: "notify:nch_x",
        stepId: "ndl_1",
        tool,
        args: { channel_id: "nch_x", delivery_id: "ndl_1", body: "{}" },
      });
      expect(res.status, JSON.stringify(res.json)).toBe(404);
      expect(res.json.error.data.field).toBe("tool");
      expect(res.json.error.message).toBe(`tool: "${tool}" is not in the catalog`);
    }
  });

  it("MCP tools/list does not list them; tools/call refuses them as unknown tools", async () => {
    const client = await mcpClient(stack.service.url, stack.keys.agent);
    try {
      const { tools } = await client.listTools();
      expect(tools.length).toBeGreaterThan(0);
      expect(tools.some((t) => t.name.startsWith("tristate."))).toBe(false);
      const answer = await client
        .callTool({
          name: "tristate.notify.webhook",
          arguments: { channel_id: "nch_x", delivery_id: "ndl_1", body: "{}" },
        })
        .then((r) => JSON.stringify(r))
        .catch((e: unknown) => String(e));
      expect(answer).toMatch(/tristate\.notify\.webhook/);
      expect(answer).toMatch(/not in the catalog|unknown tool|Unknown tool|UNKNOWN_TOOL/i);
    } finally {
      await client.close();
    }
  });

  it("a user catalog may not declare a tristate. tool (refused at load naming the field)", async () => {
    const tool = defineTool({ name: "tristate.mine", kind: "read_only", timeoutMs: 1000, invoke: async () => null });
    await expect(buildCatalog({ tools: [tool] })).rejects.toThrow(
      /tool "tristate\.mine": name: \(tools\.0\) must not start with "tristate\."/,
    );
    const declared = {
      name: "tristate.notify.webhook",
      kind: "read_only",
      method: "GET",
      url: "http://127.0.0.1:9/",
      args: { type: "object", properties: {} },
      timeoutMs: 1000,
    };
    await expect(buildCatalog({ httpTools: [declared] })).rejects.toThrow(
      /name: \(httpTools\.0\) must not start with "tristate\."/,
    );
  });
});
