/**
 * T15 — Same step, different amount: a key-reuse conflict (Stripe, IETF draft, Square).
 * Source: https://github.com/stripe/stripe-ruby/issues/503 (related: jcagarcia/grape-idempotency#13,
 * square/connect-api-examples#135).
 *
 * Remote (the shared fake remote, honouring keys, refunds numbered `RF-<n>`; `POST /effects`
 * stands for `POST /refunds`). Probe by key. Tool `refund.create`, identity orderId + amountCents.
 *
 * Scale: 1 case-second = 50 ms.
 */

import { type FakeRemote, startFakeRemote } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canon } from "../../src/canon.ts";
import { createExecutor } from "../../src/executor.ts";
import { callHttp } from "../../src/http.ts";
import { MemoryIntentStore } from "../../src/memory-intent-store.ts";
import { defineTool } from "../../src/tool.ts";
import { probeByClientRef, scaledOptions, Timeline } from "./support.ts";

const S = 50;
let remote: FakeRemote;
let store: MemoryIntentStore;

beforeEach(async () => {
  remote = await startFakeRemote({ honorsKey: true, idFormat: (n) => `RF-${n}` });
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
    timeoutMs: 3 * S,
    invoke: async (args, ctx) =>
      (await callHttp(ctx, { method: "POST", url: `${remote.url}/effects`, body: args })).body,
    probe: (_args, ctx) => probeByClientRef(remote.url, ctx),
  });
}

const refund = (amountCents: number, tl: Timeline) => ({
  runId: "run-15",
  stepId: "refund",
  tool: "refund.create",
  args: { orderId: "ORD-0003", amountCents },
  deadline: tl.deadline(20),
});

describe("field-t15-same-step-different-amount", () => {
  it("run 2 with 700 after a SUCCEEDED 500 in the same step → IDEMPOTENCY_CONFLICT, nothing sent, record unchanged", async () => {
    const tl = new Timeline(S);
    const executor = createExecutor({ store, tools: [refundTool()], ...scaledOptions(S) });
    const run1 = await executor.call(refund(500, tl));
    expect(run1).toMatchObject({ status: "SUCCEEDED", result: { id: "RF-1" } });
    const before = await store.get(run1.idempotency_key);

    const run2 = await executor.call(refund(700, tl));
    expect(run2).toMatchObject({
      status: "FAILED_NO_EFFECT",
      retry_safe: false,
      error: { code: "IDEMPOTENCY_CONFLICT" },
    });
    expect(remote.posts).toBe(1);
    expect(remote.effects).toHaveLength(1);
    const after = await store.get(run1.idempotency_key);
    expect(after).toEqual(before);
    expect(after).toMatchObject({ status: "SUCCEEDED", result: { id: "RF-1" }, args: { amountCents: 500 } });
  });

  for (const committed of [true, false]) {
    it(`variant: run 1 UNKNOWN (${committed ? "committed" : "not committed"}, response lost) → 700 refused; reconciling uses only the 500 payload`, async () => {
      const tl = new Timeline(S);
      const executor = createExecutor({ store, tools: [refundTool()], ...scaledOptions(S) });
      remote.fault({ commit: committed, answer: "reset" });
      remote.probesFail = true; // run 1 cannot learn the outcome
      const run1 = await executor.call(refund(500, tl));
      expect(run1).toMatchObject({ status: "UNKNOWN", retry_safe: false, attempt: 1 });
      expect(remote.posts).toBe(1);

      const run2 = await executor.call(refund(700, tl));
      expect(run2).toMatchObject({
        status: "FAILED_NO_EFFECT",
        retry_safe: false,
        error: { code: "IDEMPOTENCY_CONFLICT" },
      });
      expect(remote.posts).toBe(1); // no remote call
      expect((await store.get(run1.idempotency_key))?.status).toBe("UNKNOWN");

      // Reconcile the original (as the sweeper or an operator would): only the persisted 500 payload.
      remote.probesFail = false;
      const settled = await executor.reconcileKey(run1.idempotency_key, tl.deadline(20));
      expect(settled).toMatchObject({
        status: "SUCCEEDED",
        resolution: committed ? "found" : "absent_resent",
      });
      expect(remote.effects).toHaveLength(1);
      expect(remote.effects[0]?.body).toMatchObject({ orderId: "ORD-0003", amountCents: 500 });
      for (const body of remote.bodiesSeen) expect(body).toMatchObject({ amountCents: 500 });
      expect(new Set(remote.keysSeen)).toEqual(new Set([run1.idempotency_key]));
    });
  }
});
