/**
 * Issue 9 §7 (backpressure): `Retry-After` on a 429 or 503 is honoured. No new attempt and no
 * resend goes out before it; the envelope carries `retry_after_ms`; a repeat call sooner is
 * answered from the log without sending anything.
 */

import { type FakeRemote, refundTool, startFakeRemote } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Deadline } from "../../src/deadline.ts";
import { createExecutor, type Executor } from "../../src/executor.ts";
import { MemoryIntentStore } from "../../src/memory-intent-store.ts";
import { sleep } from "./support.ts";

const REFUND = { order_id: "A-1182", amount: "49.90", currency: "EUR" };

let remote: FakeRemote;
let store: MemoryIntentStore;

beforeEach(async () => {
  remote = await startFakeRemote({ honorsKey: true });
  store = new MemoryIntentStore();
});
afterEach(async () => {
  await remote.close();
});

function executor(): Executor {
  return createExecutor({
    store,
    tools: [refundTool(remote)],
    probe: { spacingMs: 10, attempts: 3, timeoutMs: 500 },
  });
}

const refund = (ex: Executor) =>
  ex.call({ runId: "run-7a", stepId: "refund", tool: "issue_refund", args: REFUND, deadline: Deadline.after(10_000) });

describe("issue 9 §7a: Retry-After is honoured", () => {
  it("429 with Retry-After: 2 → FAILED_NO_EFFECT with retry_after_ms in (0, 2000]; an immediate repeat sends nothing and is replayed", async () => {
    const ex = executor();
    remote.fault({ commit: false, answer: 429, headers: { "retry-after": "2" } });
    const limited = await refund(ex);
    expect(limited).toMatchObject({
      status: "FAILED_NO_EFFECT",
      retry_safe: true,
      attempt: 1,
      replayed: false,
      error: { httpStatus: 429, retryAfterMs: 2000 },
    });
    expect(limited.retry_after_ms).toBeGreaterThan(0);
    expect(limited.retry_after_ms).toBeLessThanOrEqual(2000);
    expect(remote.posts).toBe(1);

    const tooSoon = await refund(ex);
    expect(tooSoon).toMatchObject({ status: "FAILED_NO_EFFECT", replayed: true, attempt: 1 });
    expect(tooSoon.retry_after_ms).toBeGreaterThan(0);
    expect(tooSoon.retry_after_ms).toBeLessThanOrEqual(limited.retry_after_ms!);
    expect(remote.posts).toBe(1); // nothing was sent
    expect(remote.effects).toHaveLength(0);
    const record = await store.get(limited.idempotency_key);
    expect(record).toMatchObject({ status: "FAILED_NO_EFFECT", attempt: 1 });
  });

  it("429 with Retry-After: 1 → after it passes, the agent's call is sent (same key) → SUCCEEDED, one effect", async () => {
    const ex = executor();
    remote.fault({ commit: false, answer: 429, headers: { "retry-after": "1" } });
    const limited = await refund(ex);
    expect(limited.retry_after_ms).toBeGreaterThan(0);
    expect(limited.retry_after_ms).toBeLessThanOrEqual(1000);
    expect((await refund(ex)).replayed).toBe(true);
    expect(remote.posts).toBe(1);

    await sleep(limited.retry_after_ms! + 50);
    const after = await refund(ex);
    expect(after).toMatchObject({ status: "SUCCEEDED", attempt: 2, replayed: false });
    expect(after.retry_after_ms).toBeUndefined();
    expect(remote.posts).toBe(2);
    expect(remote.keysSeen).toEqual([limited.idempotency_key, limited.idempotency_key]);
    expect(remote.effects).toHaveLength(1);
  });

  it("429 with Retry-After as an HTTP-date (RFC 9110 §10.2.3) is honoured the same way", async () => {
    const ex = executor();
    const at = new Date(Date.now() + 2_000).toUTCString(); // second resolution: 1–2 s ahead
    remote.fault({ commit: false, answer: 429, headers: { "retry-after": at } });
    const limited = await refund(ex);
    expect(limited).toMatchObject({ status: "FAILED_NO_EFFECT", error: { httpStatus: 429 } });
    expect(limited.retry_after_ms).toBeGreaterThan(0);
    expect(limited.retry_after_ms).toBeLessThanOrEqual(2_000);
    expect(await refund(ex)).toMatchObject({ replayed: true, attempt: 1 });
    expect(remote.posts).toBe(1);
  });

  it("503 with Retry-After: 1 on an idempotent_by_key tool → UNKNOWN; reconciliation (probes absent) does not resend before it; afterwards it resends once", async () => {
    const ex = executor();
    remote.fault({ commit: false, answer: 503, headers: { "retry-after": "1" } });
    const unavailable = await refund(ex);
    expect(unavailable).toMatchObject({ status: "UNKNOWN", retry_safe: false, attempt: 1 });
    // The probes found nothing; the resend is due, but the remote asked for a second.
    expect(remote.posts).toBe(1);
    expect(unavailable.retry_after_ms).toBeGreaterThan(0);
    expect(unavailable.retry_after_ms).toBeLessThanOrEqual(1000);
    const key = unavailable.idempotency_key;
    expect((await store.get(key))?.needsHuman).toBe(false);

    // A reconciliation before Retry-After passes (a repeat call, the sweeper) sends nothing either.
    const early = await ex.reconcileKey(key, Deadline.after(5_000));
    expect(early).toMatchObject({ status: "UNKNOWN", retry_safe: false });
    expect(remote.posts).toBe(1);
    const repeat = await refund(ex);
    expect(repeat.status).toBe("UNKNOWN");
    expect(remote.posts).toBe(1);

    await sleep(1_050);
    const settled = await ex.reconcileKey(key, Deadline.after(5_000));
    expect(settled).toMatchObject({ status: "SUCCEEDED", resolution: "absent_resent", attempt: 2 });
    expect(remote.posts).toBe(2);
    expect(remote.keysSeen).toEqual([key, key]);
    expect(remote.effects).toHaveLength(1);
  });
});
