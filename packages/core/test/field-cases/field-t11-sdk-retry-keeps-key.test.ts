/**
 * T11 — The SDK's own retries overwrite the caller's idempotency key (stripe-php).
 * Source: https://github.com/stripe/stripe-php/issues/637 (related: stripe/stripe-node#559).
 * The transport-level guard is tested in src/http.test.ts; this is the executor-level case.
 *
 * Remote `pay-api` (the shared fake remote, honouring keys; `POST /effects` stands for
 * `POST /charges`): the first POST commits, then resets; later requests are normal. It records
 * `keysSeen`. The transport is an SDK-style client with `maxNetworkRetries: 2` that, with retries
 * on, replaces the caller's key with a fresh UUID (the stripe-php bug; {@link sdkClient}).
 *
 * Scale: 1 case-second = 50 ms.
 */

import { type FakeRemote, startFakeRemote } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canon } from "../../src/canon.ts";
import { createExecutor } from "../../src/executor.ts";
import { MemoryIntentStore } from "../../src/memory-intent-store.ts";
import { defineTool } from "../../src/tool.ts";
import { probeByClientRef, scaledOptions, sdkClient, Timeline } from "./support.ts";

const S = 50;
let remote: FakeRemote;
let store: MemoryIntentStore;

beforeEach(async () => {
  remote = await startFakeRemote({ honorsKey: true });
  remote.fault({ answer: "reset" }); // the first POST commits, then resets
  store = new MemoryIntentStore();
});
afterEach(async () => {
  await remote.close();
});

/** `payment.charge` over the SDK; the executor's tool turns the SDK's retries off unless told otherwise. */
function chargeTool(sdk: ReturnType<typeof sdkClient>, sdkRetriesOff = true) {
  return defineTool({
    name: "payment.charge",
    kind: "idempotent_by_key",
    identity: { orderId: canon.upper, amountCents: canon.decimal(0), currency: canon.upper },
    timeoutMs: 3 * S, // read timeout 3 s
    invoke: async (args, ctx) =>
      (
        await sdk.post(
          ctx,
          { method: "POST", url: `${remote.url}/effects`, body: args },
          sdkRetriesOff ? { maxRetries: 0 } : {},
        )
      ).body,
    probe: (_args, ctx) => probeByClientRef(remote.url, ctx),
  });
}

const args = { orderId: "ORD-0001", amountCents: 2000, currency: "EUR" };

describe("field-t11-sdk-retry-keeps-key", () => {
  it("every POST that reaches the remote carries the executor's key K; reset → probe finds it → SUCCEEDED, one effect", async () => {
    const tl = new Timeline(S);
    const sdk = sdkClient({ maxRetries: 2, regeneratesKey: true });
    const executor = createExecutor({ store, tools: [chargeTool(sdk)], ...scaledOptions(S) });
    const env = await executor.call({
      runId: "run-11",
      stepId: "charge",
      tool: "payment.charge",
      args,
      deadline: tl.deadline(20),
    });

    expect(env).toMatchObject({ status: "SUCCEEDED", retry_safe: true, attempt: 1, resolution: "found" });
    expect(remote.keysSeen.length).toBeGreaterThan(0);
    expect(new Set(remote.keysSeen)).toEqual(new Set([env.idempotency_key]));
    expect(remote.effects).toHaveLength(1);
    expect(remote.posts).toBe(1);
  });

  it("a tool that leaves the SDK's retries on: the key the SDK swaps in never reaches the remote; fixed, the retry carries K", async () => {
    const tl = new Timeline(S);
    const buggy = createExecutor({
      store,
      tools: [chargeTool(sdkClient({ maxRetries: 2, regeneratesKey: true }), false)],
      ...scaledOptions(S),
    });
    const first = await buggy.call({
      runId: "run-11",
      stepId: "charge",
      tool: "payment.charge",
      args,
      deadline: tl.deadline(20),
    });
    // callHttp refuses a request whose Idempotency-Key differs from the executor's, before sending.
    expect(first).toMatchObject({ status: "FAILED_NO_EFFECT", retry_safe: true, error: { code: "INVALID_ARGUMENTS" } });
    expect(remote.posts).toBe(0);
    expect(remote.keysSeen).toEqual([]);

    // The agent tries again (retry_safe) on a fixed deployment: same key, attempt 2.
    const fixed = createExecutor({
      store,
      tools: [chargeTool(sdkClient({ maxRetries: 2, regeneratesKey: true }))],
      ...scaledOptions(S),
    });
    const second = await fixed.call({
      runId: "run-11",
      stepId: "charge",
      tool: "payment.charge",
      args,
      deadline: tl.deadline(20),
    });
    expect(second).toMatchObject({
      status: "SUCCEEDED",
      retry_safe: true,
      attempt: 2,
      idempotency_key: first.idempotency_key,
    });
    expect(new Set(remote.keysSeen)).toEqual(new Set([first.idempotency_key]));
    expect(remote.effects).toHaveLength(1);
  });
});
