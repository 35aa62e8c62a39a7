import { callHttp, canon, defineTool } from "@tristate/core";
import type { FakeRemote } from "@tristate/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { reversibleRefundTools } from "./reversible-refund.ts";
import { startStack, type TestStack } from "./support.ts";

/** The refund with a compensation (reverse_refund), a confirmation policy over 100.00, and an irreversible e-mail. */
function tools(remote: FakeRemote) {
  const email = defineTool({
    name: "send_email",
    kind: "unsafe",
    irreversible: true,
    args: z.object({ to: z.string(), template_id: z.string() }),
    identity: { to: canon.lower, template_id: canon.trim },
    timeoutMs: 1000,
    invoke: async (args, ctx) =>
      (await callHttp(ctx, { method: "POST", url: `${remote.url}/effects`, body: { ...args, kind: "email" } })).body,
  });
  return [
    ...reversibleRefundTools(remote, {
      confirmation: (a) => (Number(a.amount) > 100 ? "refunds over 100.00 need confirmation" : false),
    }),
    email,
  ];
}

let stack: TestStack;
beforeAll(async () => {
  stack = await startStack({ tools });
});
afterAll(async () => {
  await stack?.close();
});

const kinds = () => stack.remote.effects.map((e) => e.body.kind ?? "refund");

describe("compensation and sagas over the API", () => {
  it("runs.abort reverses a confirmed refund once, as its own call; aborting twice does nothing twice", async () => {
    const runId = "run-abort";
    const refund = await stack.post("calls.execute", {
      runId,
      stepId: "refund",
      tool: "issue_refund",
      args: { order_id: "A-1", amount: 20, currency: "EUR" },
      budgetMs: 10_000,
    });
    expect(refund.json.result.data.status).toBe("SUCCEEDED");
    const first = await stack.post("runs.abort", { runId, budgetMs: 10_000 });
    expect(first.status).toBe(200);
    const report = first.json.result.data;
    expect(report).toMatchObject({ runId, complete: true, needsHuman: 0 });
    expect(report.steps).toHaveLength(1);
    expect(report.steps[0]).toMatchObject({
      stepId: "refund",
      outcome: "compensated",
      compensation: { status: "SUCCEEDED", replayed: false },
    });
    expect(report.steps[0].compensation.idempotency_key).not.toBe(refund.json.result.data.idempotency_key);
    expect(report.summary).toMatch(/1 effect\(s\) reversed/);
    const second = await stack.post("runs.abort", { runId, budgetMs: 10_000 });
    expect(second.json.result.data.steps[0]).toMatchObject({
      outcome: "compensated",
      compensation: { replayed: true },
    });
    expect(kinds().filter((k) => k === "reversal")).toHaveLength(1);
    const run = await stack.get("runs.get", { runId });
    expect(run.json.result.data.records).toHaveLength(2); // the refund and its compensation, each with its own record
    const stats = await stack.get("stats.overview", { fromEpochMs: Date.now() - 60_000, toEpochMs: Date.now() + 1000 });
    const row = stats.json.result.data.tools.find((t: { tool: string }) => t.tool === "issue_refund");
    expect(row).toMatchObject({ compensationsRun: 1, compensationsFailed: 0 });
  });

  it("a plan refuses the irreversible e-mail while a later fallible step is not done", async () => {
    const runId = "run-plan";
    const plan = await stack.post("runs.plan", {
      runId,
      steps: [
        { stepId: "email", tool: "send_email" },
        { stepId: "refund", tool: "issue_refund" },
      ],
    });
    expect(plan.status).toBe(200);
    const before = stack.remote.posts;
    const email = await stack.post("calls.execute", {
      runId,
      stepId: "email",
      tool: "send_email",
      args: { to: "a@example.test", template_id: "done" },
      budgetMs: 10_000,
    });
    expect(email.json.result.data).toMatchObject({
      status: "FAILED_NO_EFFECT",
      error: { code: "IRREVERSIBLE_BEFORE_FALLIBLE" },
    });
    expect(stack.remote.posts).toBe(before);
    const badPlan = await stack.post("runs.plan", { runId, steps: [{ stepId: "x", tool: "nope" }] });
    expect(badPlan.status).toBe(400);
    expect(badPlan.json.error.data.field).toBe("steps.0.tool");
  });

  it("a refund over the threshold needs an operator's confirmation token; with one it proceeds", async () => {
    const call = {
      runId: "run-confirm",
      stepId: "refund",
      tool: "issue_refund",
      args: { order_id: "B-2", amount: "250.00", currency: "EUR" },
      budgetMs: 10_000,
    };
    const before = stack.remote.posts;
    const refused = await stack.post("calls.execute", call);
    expect(refused.json.result.data).toMatchObject({
      status: "FAILED_NO_EFFECT",
      retry_safe: true,
      error: { code: "CONFIRMATION_REQUIRED", field: "confirmationToken" },
    });
    expect(stack.remote.posts).toBe(before);
    const { budgetMs: _b, ...target } = call;
    expect((await stack.post("confirmations.issue", target, stack.keys.agent)).status).toBe(403);
    const issued = await stack.post("confirmations.issue", target, stack.keys.operator);
    expect(issued.status).toBe(200);
    const other = await stack.post(
      "confirmations.issue",
      { ...target, args: { ...target.args, amount: "900.00" } },
      stack.keys.operator,
    );
    const wrong = await stack.post("calls.execute", { ...call, confirmationToken: other.json.result.data.token });
    expect(wrong.json.result.data.error.code).toBe("CONFIRMATION_REQUIRED");
    const ok = await stack.post("calls.execute", { ...call, confirmationToken: issued.json.result.data.token });
    expect(ok.json.result.data).toMatchObject({
      status: "SUCCEEDED",
      idempotency_key: issued.json.result.data.idempotencyKey,
    });
    expect(stack.remote.posts).toBe(before + 1);
  });

  it("an operator compensates a confirmed effect through queue.resolve, audited", async () => {
    const refund = await stack.post("calls.execute", {
      runId: "run-op",
      stepId: "refund",
      tool: "issue_refund",
      args: { order_id: "C-3", amount: 5, currency: "EUR" },
      budgetMs: 10_000,
    });
    const key = refund.json.result.data.idempotency_key;
    const record = (await stack.get("calls.get", { key })).json.result.data;
    const res = await stack.post(
      "queue.resolve",
      {
        key,
        action: "compensate",
        note: "customer kept the item",
        expectedVersion: record.version,
        operatorActionId: "op-compensate-0001",
      },
      stack.keys.operator,
    );
    expect(res.status).toBe(200);
    expect(res.json.result.data.envelope).toMatchObject({ status: "SUCCEEDED" });
    expect(kinds().filter((k) => k === "reversal")).toHaveLength(2); // this one and the abort test's
    const audit = await stack.get("audit.list", { action: "compensate" });
    expect(audit.json.result.data.entries[0]).toMatchObject({ key, action: "compensate" });
  });
});
