/**
 * T27 — The workflow engine starts a new activity attempt while the old one still runs; the attempt
 * number must not change the key (Temporal). Source: https://github.com/dust-tt/dust/pull/5045
 * (related: btravstack/temporal-contract#428, Azure/Durable-Task-Scheduler#46).
 *
 * Remote `pay-api` (the shared fake remote, honouring keys; `POST /effects` stands for
 * `POST /charges`): commits and holds the response 10 s. Probe by key.
 *
 * Scale: 1 case-second = 50 ms. Reserve 0.5 s, so attempt 1 (3.5 s budget, 3 s read timeout) has
 * no budget left to probe and ends UNKNOWN, as in the case.
 * API difference: `executor.call` has no `meta`; the workflow's attempt number and worker id ride
 * along beside the input and are no key input. Each attempt runs in its own executor (worker).
 * The executor's first probe runs at once (t=4), not at t=5.
 */

import { type FakeRemote, startFakeRemote } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canon } from "../../src/canon.ts";
import { createExecutor } from "../../src/executor.ts";
import { callHttp } from "../../src/http.ts";
import { MemoryIntentStore } from "../../src/memory-intent-store.ts";
import { defineTool } from "../../src/tool.ts";
import { input, probeByClientRef, scaledOptions, Timeline } from "./support.ts";

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

function chargeTool() {
  return defineTool({
    name: "payment.charge",
    kind: "idempotent_by_key",
    identity: { orderId: canon.upper, amountCents: canon.decimal(0) },
    timeoutMs: 3 * S, // read timeout 3 s
    invoke: async (args, ctx) =>
      (await callHttp(ctx, { method: "POST", url: `${remote.url}/effects`, body: args })).body,
    probe: (_args, ctx) => probeByClientRef(remote.url, ctx),
  });
}

describe("field-t27-workflow-attempt-same-key", () => {
  it("activity attempt 2 (another worker) gets the same key and finds attempt 1's charge → SUCCEEDED, one effect", async () => {
    const tl = new Timeline(S);
    remote.fault({ respondDelayMs: 10 * S });
    const activity = (meta: { attempt: number; workerId: string }, budgetS: number) =>
      input({
        runId: "wf-0007/run-1",
        stepId: "activity-charge",
        tool: "payment.charge",
        args: { orderId: "ORD-0007", amountCents: 4200 },
        meta,
        deadline: tl.deadline(budgetS),
      });

    tl.start();
    const w1 = createExecutor({ store, tools: [chargeTool()], ...scaledOptions(S) });
    const attempt1 = await w1.call(activity({ attempt: 1, workerId: "w1" }, 3.5));
    expect(attempt1).toMatchObject({ status: "UNKNOWN", retry_safe: false, attempt: 1 });
    expect(remote.effects).toHaveLength(1);

    await tl.until(4);
    const w2 = createExecutor({ store, tools: [chargeTool()], ...scaledOptions(S) });
    const attempt2 = await w2.call(activity({ attempt: 2, workerId: "w2" }, 20));
    expect(attempt2.idempotency_key).toBe(attempt1.idempotency_key);
    expect(attempt2).toMatchObject({ status: "SUCCEEDED", retry_safe: true, attempt: 1, resolution: "found" });
    expect(remote.effects).toHaveLength(1);
    expect(remote.posts).toBe(1);
  });
});
