import { createTristateClient } from "@tristate/client";
import { type LocalStack, startLocalStack } from "@tristate/local-stack";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tristateTools } from "../src/ai-sdk.ts";
import { runTool } from "../src/shared.ts";

// Issue 11 review: with the old default step (the tool's name) a model refunding two orders in one
// run had the second refused (IDEMPOTENCY_CONFLICT). Every adapter goes through runTool; without a
// stepId the executor takes the tool and the canonical identity as the step.

let stack: LocalStack;
beforeAll(async () => {
  stack = await startLocalStack();
});
afterAll(async () => {
  await stack?.close();
});

describe("the adapters' default step: the tool and the arguments' identity", () => {
  it("two orders refunded in one run are two effects; the model's reworded repeat replays the first", async () => {
    const client = createTristateClient({ url: stack.url, apiKey: stack.agentKey });
    const options = { runId: "run-default-step", budgetMs: 10_000 };
    const before = stack.remote.effects.length;
    const refund = (args: Record<string, unknown>, toolCallId: string) =>
      runTool(client, options, { tool: "issue_refund", args, toolCallId });
    const one = await refund({ order_id: "DS-1", amount: 5, currency: "EUR", reason: "a" }, "call-1");
    const two = await refund({ order_id: "DS-2", amount: 5, currency: "EUR", reason: "a" }, "call-2");
    const repeat = await refund({ order_id: "ds-1", amount: "5.00", currency: "EUR", reason: "again" }, "call-3");
    expect(one).toMatchObject({ status: "SUCCEEDED", replayed: false });
    expect(two).toMatchObject({ status: "SUCCEEDED", replayed: false });
    expect(repeat).toMatchObject({ status: "SUCCEEDED", replayed: true });
    expect(stack.remote.effects.length - before).toBe(2);
  });

  it("through the AI SDK tool set (no stepId): a third order is a third effect", async () => {
    const client = createTristateClient({ url: stack.url, apiKey: stack.agentKey });
    const tools = await tristateTools(client, { runId: "run-default-step", budgetMs: 10_000 });
    const before = stack.remote.effects.length;
    const execute = tools.issue_refund?.execute;
    if (!execute) throw new Error("issue_refund has no execute");
    const out = await execute(
      { order_id: "DS-3", amount: 5, currency: "EUR", reason: "a" },
      { toolCallId: "c", messages: [], context: {} },
    );
    expect(out).toMatchObject({ status: "SUCCEEDED", replayed: false });
    expect(stack.remote.effects.length - before).toBe(1);
  });
});
