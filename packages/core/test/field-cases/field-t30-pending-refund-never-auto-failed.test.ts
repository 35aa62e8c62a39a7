/**
 * T30 — A refund left "pending" was auto-marked failed after 24 h without asking the gateway,
 * inviting a second refund (OwnPay). Source: https://github.com/own-pay/OwnPay/issues/222
 * (related: coopcycle/coopcycle-web#4608, #4341, medusajs/medusa#13301).
 *
 * Remote `gateway` (the shared fake remote without key support; `POST /effects` stands for
 * `POST /refunds`): commits, then resets. No key support, no probe: tool `refund.create` is
 * `unsafe` without a probe. The 25 h pass on a {@link FakeClock}; "restart" is a new executor over
 * the same store, and "every background job" is the sweeper (`sweepStale`), run more often than
 * the executor's `maxReconcileSweeps`.
 * Added variant: the process died right after the gateway committed (the record is an orphaned
 * PENDING, the case's "process had died" story): age and sweeps still never make it FAILED.
 */

import { FakeClock, type FakeRemote, startFakeRemote } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canon } from "../../src/canon.ts";
import { Deadline } from "../../src/deadline.ts";
import { createExecutor } from "../../src/executor.ts";
import { callHttp } from "../../src/http.ts";
import { MemoryIntentStore } from "../../src/memory-intent-store.ts";
import { sweepStale } from "../../src/sweeper.ts";
import { defineTool } from "../../src/tool.ts";
import { never, waitFor, withoutKeyHeader } from "./support.ts";

let remote: FakeRemote;
let store: MemoryIntentStore;
let clock: FakeClock;

beforeEach(async () => {
  remote = await startFakeRemote({ honorsKey: false });
  for (let i = 0; i < 3; i++) remote.fault({ answer: "reset" }); // commits, then resets
  store = new MemoryIntentStore();
  clock = new FakeClock();
});
afterEach(async () => {
  await remote.close();
});

function refundTool(crashAfterSend = false) {
  return defineTool({
    name: "refund.create",
    kind: "unsafe",
    identity: { orderId: canon.upper, amountCents: canon.decimal(0) },
    timeoutMs: 5000,
    invoke: async (args, ctx) => {
      const post = callHttp(withoutKeyHeader(ctx), { method: "POST", url: `${remote.url}/effects`, body: args });
      if (crashAfterSend) {
        post.catch(() => {});
        await waitFor(() => remote.effects.length === 1);
        return never();
      }
      return (await post).body;
    },
  });
}

const refund = () => ({
  runId: "run-30",
  stepId: "refund",
  tool: "refund.create",
  args: { orderId: "ORD-0010", amountCents: 1299 },
  deadline: Deadline.after(10_000, clock),
});

async function restartAndSweep() {
  const executor = createExecutor({ store, tools: [refundTool()], clock, maxReconcileSweeps: 5 });
  for (let pass = 0; pass < 7; pass++) {
    await sweepStale({ store, executor });
    clock.advance(60_000);
  }
  return executor;
}

describe("field-t30-pending-refund-never-auto-failed", () => {
  it("UNKNOWN refund, 25 h later, restart and sweeps: still UNKNOWN; a new run() asks for a human and sends nothing", async () => {
    const run1 = await createExecutor({ store, tools: [refundTool()], clock }).call(refund());
    expect(run1).toMatchObject({ status: "UNKNOWN", retry_safe: false });
    expect(remote.posts).toBe(1);

    clock.advance(25 * 3600_000);
    const executor = await restartAndSweep();
    expect((await store.get(run1.idempotency_key))?.status).toBe("UNKNOWN"); // age never makes it FAILED

    const run2 = await executor.call(refund());
    expect(run2).toMatchObject({
      status: "UNKNOWN",
      retry_safe: false,
      resolution: "needs_human",
      error: { code: "NO_PROBE" },
    });
    expect(remote.posts).toBe(1);
    expect(remote.requests).toHaveLength(1);
    expect(remote.effects).toHaveLength(1);
  });

  it("variant: the process died after the gateway refunded (orphaned PENDING); 25 h and sweeps later → UNKNOWN needs_human, never FAILED", async () => {
    const dead = createExecutor({ store, tools: [refundTool(true)], clock });
    void dead.call(refund()); // never settles
    await waitFor(() => remote.effects.length === 1);

    clock.advance(25 * 3600_000);
    const executor = await restartAndSweep();
    const run2 = await executor.call(refund());
    expect(run2).toMatchObject({
      status: "UNKNOWN",
      retry_safe: false,
      resolution: "needs_human",
      error: { code: "NO_PROBE" },
    });
    expect((await store.get(run2.idempotency_key))?.status).toBe("UNKNOWN");
    const types = (await store.listEvents(run2.idempotency_key)).map((e) => e.type);
    expect(types).toContain("lease_expired");
    expect(types).not.toContain("resend");
    expect(remote.posts).toBe(1);
    expect(remote.effects).toHaveLength(1);
  });
});
