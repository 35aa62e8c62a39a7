import { refundTool } from "@tristate/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type TestStack } from "./support.ts";

// Issue 11 review: the SDK adapters' default step was the tool's name, so a model refunding two
// orders in one run had the second refused (IDEMPOTENCY_CONFLICT) with advice it could not follow.
// calls.execute without a stepId now takes the tool and the canonical identity as the step (MCP's rule).

let stack: TestStack;
beforeAll(async () => {
  stack = await startStack({ tools: (remote) => [refundTool(remote)] });
});
afterAll(async () => {
  await stack?.close();
});

const call = (args: Record<string, unknown>) => ({
  runId: "run-auto-step",
  tool: "issue_refund",
  args,
  budgetMs: 10_000,
});

describe("calls.execute without a stepId: the step is the tool and its canonical identity", () => {
  it("two orders are two effects; a reworded repeat of one replays it; the steps are auto:<tool>:<hash>", async () => {
    const before = stack.remote.effects.length;
    const first = await stack.post(
      "calls.execute",
      call({ order_id: "AS-1", amount: 10, currency: "EUR", reason: "x" }),
    );
    const second = await stack.post(
      "calls.execute",
      call({ order_id: "AS-2", amount: 10, currency: "EUR", reason: "x" }),
    );
    const again = await stack.post(
      "calls.execute",
      call({ order_id: "as-1", amount: "10.00", currency: "EUR", reason: "same refund, reworded" }),
    );
    const [a, b, c] = [first, second, again].map((r) => r.json.result.data);
    expect(a).toMatchObject({ status: "SUCCEEDED", replayed: false });
    expect(b).toMatchObject({ status: "SUCCEEDED", replayed: false });
    expect(c).toMatchObject({ status: "SUCCEEDED", replayed: true, idempotency_key: a.idempotency_key });
    expect(a.idempotency_key).not.toBe(b.idempotency_key);
    expect(stack.remote.effects.length - before).toBe(2);
    for (const key of [a.idempotency_key, b.idempotency_key]) {
      const record = (await stack.get("calls.get", { key }, stack.keys.agent)).json.result.data;
      expect(record.stepId).toMatch(/^auto:issue_refund:[0-9a-f]{16}$/);
    }
  });

  it("arguments the schema refuses are refused as before (400 naming the field), nothing recorded", async () => {
    const bad = await stack.post("calls.execute", call({ order_id: "AS-3", amount: "lots", currency: "EUR" }));
    expect(bad.status).toBe(400);
    expect(bad.json.error.data.field).toMatch(/^args\./);
    expect(bad.json.error.data.detail).toMatchObject({ status: "FAILED_NO_EFFECT", idempotency_key: "" });
  });
});
