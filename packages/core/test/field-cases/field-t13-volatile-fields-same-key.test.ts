/**
 * T13 — A key hashed from the full payload changes with volatile fields (Adyen commercetools).
 * Source: https://github.com/Adyen/adyen-commercetools/issues/1305.
 * The unit part (keyOf equal / different) is in src/idempotency-key.test.ts; this is the
 * integration part through the executor.
 *
 * Remote `psp` (the shared fake remote, deduplicating by key; `POST /effects` stands for
 * `POST /payments`): the first POST commits and holds the response 5 s. Probe by key.
 *
 * Scale: 1 case-second = 50 ms. Reserve 0.5 s, so run 1 (2.5 s budget, 2 s read timeout) has no
 * budget left to probe and ends UNKNOWN, as in the case.
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
  remote = await startFakeRemote({ honorsKey: true });
  store = new MemoryIntentStore();
});
afterEach(async () => {
  await remote.close();
});

function authoriseTool() {
  return defineTool({
    name: "payment.authorise",
    kind: "idempotent_by_key",
    identity: { paymentId: canon.upper, "amount.value": canon.decimal(0), "amount.currency": canon.upper },
    timeoutMs: 2 * S, // read timeout 2 s
    invoke: async (args, ctx) =>
      (await callHttp(ctx, { method: "POST", url: `${remote.url}/effects`, body: args })).body,
    probe: (_args, ctx) => probeByClientRef(remote.url, ctx),
  });
}

describe("field-t13-volatile-fields-same-key", () => {
  it("a retry with new checkoutAttemptId, createdAt and encrypted card (and another key order) reuses the key → probe finds it", async () => {
    const tl = new Timeline(S);
    const executor = createExecutor({ store, tools: [authoriseTool()], ...scaledOptions(S) });
    remote.fault({ respondDelayMs: 5 * S });

    tl.start();
    const run1 = await executor.call({
      runId: "run-13",
      stepId: "authorise",
      tool: "payment.authorise",
      args: {
        paymentId: "PAY-0001",
        amount: { value: 1000, currency: "EUR" },
        checkoutAttemptId: "att-1",
        sdkData: { createdAt: "2025-01-01T10:00:00.000Z" },
        encryptedCard: "enc-A",
      },
      deadline: tl.deadline(2.5),
    });
    expect(run1).toMatchObject({ status: "UNKNOWN", retry_safe: false, attempt: 1, error: { code: "READ_TIMEOUT" } });
    expect(remote.effects).toHaveLength(1);

    await tl.until(3);
    const run2 = await executor.call({
      runId: "run-13",
      stepId: "authorise",
      tool: "payment.authorise",
      args: {
        encryptedCard: "enc-B",
        sdkData: { createdAt: "2025-01-01T10:00:03.000Z" },
        checkoutAttemptId: "att-2",
        amount: { currency: "EUR", value: 1000 },
        paymentId: "PAY-0001",
      },
      deadline: tl.deadline(10),
    });
    expect(run2.idempotency_key).toBe(run1.idempotency_key);
    expect(run2).toMatchObject({ status: "SUCCEEDED", retry_safe: true, attempt: 1, resolution: "found" });
    expect(remote.effects).toHaveLength(1);
    expect(remote.posts).toBe(1);

    // The other side of the unit test: a different amount is a different effect (a new step would get
    // a new key; in this step it is refused as a conflict, nothing sent).
    const other = await executor.call({
      runId: "run-13",
      stepId: "authorise",
      tool: "payment.authorise",
      args: { paymentId: "PAY-0001", amount: { value: 1200, currency: "EUR" } },
      deadline: tl.deadline(10),
    });
    expect(other.status).toBe("FAILED_NO_EFFECT");
    expect(other.error?.code).toBe("IDEMPOTENCY_CONFLICT");
    expect(other.idempotency_key).not.toBe(run1.idempotency_key);
    expect(remote.posts).toBe(1);
  });
});
