/**
 * T14 — The agent's tool-call id changes on every turn, so it cannot be the dedup key (OpenAI
 * Agents SDK, crewAI). Source: https://github.com/openai/openai-agents-python/issues/4254.
 *
 * Remote `refund-api` (the shared fake remote, honouring keys; `POST /effects` stands for
 * `POST /refunds`): commits and holds the response 5 s. The probe is by business identity
 * (`GET /effects/search?orderId=…&since=…`, for `GET /refunds?orderId=`).
 *
 * Scale: 1 case-second = 50 ms. Reserve 0.5 s, so run 1 (2.5 s budget, 2 s read timeout) has no
 * budget left to probe and ends UNKNOWN, as in the case.
 * API difference: `executor.call` has no `meta`; whatever the agent framework attaches (here the
 * tool-call id, both beside the input and inside the arguments) is not a key input. The key comes
 * only from run, step, tool and the declared identity fields.
 */

import { type FakeRemote, startFakeRemote } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canon } from "../../src/canon.ts";
import { createExecutor } from "../../src/executor.ts";
import { callHttp } from "../../src/http.ts";
import { MemoryIntentStore } from "../../src/memory-intent-store.ts";
import { defineTool } from "../../src/tool.ts";
import { input, scaledOptions, Timeline } from "./support.ts";

const S = 50;
let remote: FakeRemote;
let store: MemoryIntentStore;

beforeEach(async () => {
  remote = await startFakeRemote({ honorsKey: true });
  store = new MemoryIntentStore();
});
afterEach(async () => {
  await remote.close();
});

function refundTool() {
  return defineTool({
    name: "refund.create",
    kind: "idempotent_by_key",
    identity: { orderId: canon.upper, amountCents: canon.decimal(0) },
    timeoutMs: 2 * S, // read timeout 2 s
    invoke: async (args, ctx) =>
      (await callHttp(ctx, { method: "POST", url: `${remote.url}/effects`, body: args })).body,
    probeByIdentity: async (args, ctx) => {
      const q = new URLSearchParams({ orderId: String(args.orderId), since: String(ctx.sinceEpochMs) });
      const res = await callHttp(ctx, { method: "GET", url: `${remote.url}/effects/search?${q}` });
      return (res.body as unknown[])[0] ?? null;
    },
  });
}

describe("field-t14-tool-call-id-not-key", () => {
  it("a re-issued call with a new tool-call id and a reworded note gets the same key → probe finds the refund", async () => {
    const tl = new Timeline(S);
    const executor = createExecutor({ store, tools: [refundTool()], ...scaledOptions(S) });
    remote.fault({ respondDelayMs: 5 * S });

    const run1 = await executor.call(
      input({
        runId: "run-14",
        stepId: "refund-1",
        tool: "refund.create",
        args: { orderId: "ORD-0002", amountCents: 500, note: "damaged item", toolCallId: "call_A" },
        meta: { toolCallId: "call_A" },
        deadline: tl.deadline(2.5),
      }),
    );
    expect(run1).toMatchObject({ status: "UNKNOWN", retry_safe: false, attempt: 1 });
    expect(remote.effects).toHaveLength(1);

    const run2 = await executor.call(
      input({
        runId: "run-14",
        stepId: "refund-1",
        tool: "refund.create",
        args: { orderId: "ORD-0002", amountCents: 500, note: "item arrived damaged", toolCallId: "call_B" },
        meta: { toolCallId: "call_B" },
        deadline: tl.deadline(10),
      }),
    );
    expect(run2.idempotency_key).toBe(run1.idempotency_key);
    expect(run2).toMatchObject({ status: "SUCCEEDED", retry_safe: true, attempt: 1, resolution: "found" });
    expect(remote.effects).toHaveLength(1);
    expect(remote.posts).toBe(1);
    // The record keeps the original arguments, not the model's rewording.
    expect((await store.get(run1.idempotency_key))?.args).toMatchObject({ note: "damaged item", toolCallId: "call_A" });
  });
});
