import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "./support.ts";

let stack: TestStack;
beforeAll(async () => {
  stack = await startStack({ env: { TRISTATE_MAX_BODY_BYTES: "4096" } });
});
afterAll(async () => {
  await stack?.close();
});

const refund = (stepId: string, over: Record<string, unknown> = {}) => ({
  runId: "run-http",
  stepId,
  tool: "issue_refund",
  args: { order_id: "A-1182", amount: 49.9, currency: "EUR", reason: "broken", ...over },
  budgetMs: 10_000,
});

describe("agents call the executor with plain JSON over HTTP", () => {
  it("POST /trpc/calls.execute with a JSON body and a Bearer key returns {result:{data: Envelope}}", async () => {
    const res = await stack.post("calls.execute", refund("step-1"));
    expect(res.status).toBe(200);
    expect(res.json.result.data).toMatchObject({ status: "SUCCEEDED", retry_safe: true, replayed: false, attempt: 1 });
    expect(res.json.result.data.idempotency_key).toMatch(/^[0-9a-f]{32}$/);
    const again = await stack.post("calls.execute", refund("step-1", { amount: "49.90", order_id: "a-1182" }));
    expect(again.json.result.data).toMatchObject({
      status: "SUCCEEDED",
      replayed: true,
      idempotency_key: res.json.result.data.idempotency_key,
    });
    expect(stack.remote.effects).toHaveLength(1);
  });

  it("calls.get returns the record for a key; tools.list the catalog with a JSON Schema; prompt.rule the rule", async () => {
    const exec = await stack.post("calls.execute", refund("step-get"));
    const key = exec.json.result.data.idempotency_key;
    const got = await stack.get("calls.get", { key }, stack.keys.agent);
    expect(got.status).toBe(200);
    expect(got.json.result.data).toMatchObject({ key, status: "SUCCEEDED", runId: "run-http", stepId: "step-get" });
    const tools = await stack.get("tools.list", undefined, stack.keys.agent);
    expect(tools.json.result.data[0]).toMatchObject({
      name: "issue_refund",
      kind: "idempotent_by_key",
      identityFields: ["order_id", "amount"],
      hasKeyProbe: true,
    });
    expect(tools.json.result.data[0].argsJsonSchema.properties.order_id).toBeTruthy();
    const rule = await stack.get("prompt.rule", undefined, stack.keys.agent);
    expect(rule.json.result.data.rule).toMatch(/retry_safe/);
  });

  it("auth: no key → 401; a bad key → 401; a viewer may not call tools → 403", async () => {
    expect((await stack.post("calls.execute", refund("a1"), null)).status).toBe(401);
    expect((await stack.post("calls.execute", refund("a2"), "ts_agent_not-a-real-key-0000000000")).status).toBe(401);
    const viewer = await stack.post("calls.execute", refund("a3"), stack.keys.viewer);
    expect(viewer.status).toBe(403);
    expect(stack.remote.posts).toBeGreaterThanOrEqual(0);
  });

  it("invalid input → 400 naming the field; nothing sent", async () => {
    const before = stack.remote.posts;
    const missing = await stack.post("calls.execute", { tool: "issue_refund", args: {}, stepId: "s" });
    expect(missing.status).toBe(400);
    expect(missing.json.error.data.field).toBe("runId");
    const badType = await stack.post("calls.execute", { ...refund("s"), budgetMs: "ten" });
    expect(badType.status).toBe(400);
    expect(badType.json.error.data.field).toBe("budgetMs");
    const badArgs = await stack.post("calls.execute", refund("s2", { amount: "forty" }));
    expect(badArgs.status).toBe(400);
    expect(badArgs.json.error.data.field).toBe("args.amount");
    expect(badArgs.json.error.message).toMatch(/amount/);
    for (const runId of ["run-é", "run 7", "step-🚀", "a\u0000b"]) {
      const odd = await stack.post("calls.execute", { ...refund("s3"), runId });
      expect(odd.status).toBe(400);
      expect(odd.json.error.data.field).toBe("runId");
    }
    const nul = await stack.post("calls.execute", refund("s4", { reason: "a\u0000b" }));
    expect(nul.status).toBe(400);
    expect(nul.json.error.data.field).toBe("args.reason");
    const malformed = await stack.post("calls.execute", "{not json");
    expect(malformed.status).toBe(400);
    expect(stack.remote.posts).toBe(before);
  });

  it("step ids in the executor's reserved namespace are refused from agents (400 naming stepId; nothing written or sent)", async () => {
    const before = stack.remote.posts;
    const exec = await stack.post("calls.execute", refund("s-own"));
    const key = exec.json.result.data.idempotency_key as string;
    for (const stepId of [`compensate:${key}`, `correct:${key}`, "compensate:anything"]) {
      const squat = await stack.post("calls.execute", refund(stepId));
      expect(squat.status).toBe(400);
      expect(squat.json.error.data.field).toBe("stepId");
      expect(squat.json.error.message).toMatch(/reserved/);
      const plan = await stack.post("runs.plan", { runId: "run-http", steps: [{ stepId, tool: "issue_refund" }] });
      expect(plan.status).toBe(400);
      expect(plan.json.error.data.field).toBe("steps.0.stepId");
    }
    expect(stack.remote.posts).toBe(before + 1);
    const run = await stack.get("runs.get", { runId: "run-http" }, stack.keys.viewer);
    expect(run.status).toBe(200);
    const steps = (run.json.result.data.records as { stepId: string }[]).map((r) => r.stepId);
    expect(steps).toContain("s-own");
    expect(steps.some((s) => s.startsWith("compensate:") || s.startsWith("correct:"))).toBe(false);
  });

  it("absurd deadlines are refused naming the field", async () => {
    const past = await stack.post("calls.execute", {
      ...refund("d1"),
      budgetMs: undefined,
      deadlineEpochMs: Date.now() - 5000,
    });
    expect(past.status).toBe(400);
    expect(past.json.error.data.field).toBe("deadlineEpochMs");
    const years = await stack.post("calls.execute", {
      ...refund("d2"),
      budgetMs: undefined,
      deadlineEpochMs: Date.now() + 3 * 365 * 24 * 3600_000,
    });
    expect(years.status).toBe(400);
    expect(years.json.error.data.field).toBe("deadlineEpochMs");
  });

  it("unknown tool → 404", async () => {
    const res = await stack.post("calls.execute", { ...refund("u1"), tool: "issue_refnd" });
    expect(res.status).toBe(404);
    expect(res.json.error.data.field).toBe("tool");
  });

  it("oversized body → 413", async () => {
    const res = await stack.post("calls.execute", refund("big", { reason: "x".repeat(10_000) }));
    expect(res.status).toBe(413);
  });

  it("/healthz and /readyz answer", async () => {
    expect((await fetch(`${stack.service.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${stack.service.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { ok: boolean }).ok).toBe(true);
  });
});

describe("admins manage keys through the API", () => {
  it("keys.create shows the secret once; the new key works; keys.revoke stops it at once; others get 403", async () => {
    const created = await stack.post("keys.create", { name: "bot-2", role: "agent" }, stack.keys.admin);
    expect(created.status).toBe(200);
    const { secret, info } = created.json.result.data;
    expect(secret).toMatch(/^ts_agent_/);
    expect((await stack.get("tools.list", undefined, secret)).status).toBe(200);
    const listed = await stack.get("keys.list", undefined, stack.keys.admin);
    expect(JSON.stringify(listed.json)).not.toContain(secret);
    // The prefix is the secret's start with 8 characters of its random part: keys of a role differ.
    const listedPrefix = (id: string) => listed.json.result.data.find((k: { id: string }) => k.id === id)?.prefix;
    expect(listedPrefix(info.id)).toMatch(/^ts_agent_[A-Za-z0-9_-]{8}$/);
    expect(secret.startsWith(listedPrefix(info.id))).toBe(true);
    const other = (await stack.post("keys.create", { name: "bot-3", role: "agent" }, stack.keys.admin)).json.result
      .data;
    expect(other.info.prefix).not.toBe(info.prefix);
    expect((await stack.post("keys.create", { name: "x", role: "agent" }, stack.keys.operator)).status).toBe(403);
    expect((await stack.post("keys.create", { name: "x", role: "root" }, stack.keys.admin)).json.error.data.field).toBe(
      "role",
    );
    expect((await stack.post("keys.revoke", { id: info.id }, stack.keys.admin)).status).toBe(200);
    expect((await stack.get("tools.list", undefined, secret)).status).toBe(401);
    expect((await stack.post("keys.revoke", { id: info.id }, stack.keys.admin)).status).toBe(404);
  });
});
