/**
 * T19 — A timed-out invocation leaves INPROGRESS, and later retries fail (Powertools Python).
 * Source: https://github.com/aws-powertools/powertools-lambda-python/issues/1038 (fixed by #1387).
 *
 * Remote `orders-api` (the shared fake remote, honouring keys; `POST /effects` stands for the
 * order endpoint): during the first 10 s it reads the request, never answers, then drops it
 * without committing; afterwards it behaves normally. Probe by key.
 *
 * Scale: 1 case-second = 20 ms. Reserve 0 here, so run 1's call may use its whole 3 s budget and
 * returns at t=3.0 like the case.
 * Differences by design:
 * - Run 1's reason is READ_TIMEOUT, not DEADLINE_EXCEEDED: the per-call timeout is the read
 *   timeout capped by the turn's deadline, and the send was cut after the request went out. What
 *   the case guards is kept: the record is UNKNOWN (not PENDING with a live lease).
 * - Probes at +0, +1, +3 s (t=60, 61, 63), not 61, 62, 64.
 * - `attempt` 2 after the resend; the case's `attempts:2` is the remote's `posts`.
 * Added variant (key retention): if run 2 comes only after the remote's 24 h key retention, a key
 * probe's "absent" proves nothing, so there is no resend; the record goes to the human queue.
 */

import { type FakeRemote, startFakeRemote } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canon } from "../../src/canon.ts";
import { createExecutor } from "../../src/executor.ts";
import { callHttp } from "../../src/http.ts";
import { MemoryIntentStore } from "../../src/memory-intent-store.ts";
import { defineTool } from "../../src/tool.ts";
import { eventsOf, JumpClock, probeByClientRef, scaledOptions, Timeline } from "./support.ts";

const S = 20;
let remote: FakeRemote;
let store: MemoryIntentStore;
let clock: JumpClock;

beforeEach(async () => {
  clock = new JumpClock();
  remote = await startFakeRemote({ honorsKey: true, now: () => clock.nowEpochMs() });
  // The first 10 s: read the request, never answer, then drop it without committing.
  remote.fault({ commit: false, answer: "reset", respondDelayMs: 10 * S });
  store = new MemoryIntentStore();
});
afterEach(async () => {
  await remote.close();
});

function orderTool() {
  return defineTool({
    name: "order.submit",
    kind: "idempotent_by_key",
    identity: { cartId: canon.upper },
    timeoutMs: 5 * S, // read timeout 5 s
    invoke: async (args, ctx) =>
      (await callHttp(ctx, { method: "POST", url: `${remote.url}/effects`, body: args })).body,
    probe: (_args, ctx) => probeByClientRef(remote.url, ctx),
  });
}

const executor = () => createExecutor({ store, tools: [orderTool()], clock, ...scaledOptions(S, { reserveS: 0 }) });
const submit = (tl: Timeline, budgetS: number) => ({
  runId: "run-19",
  stepId: "submit",
  tool: "order.submit",
  args: { cartId: "CART-0001" },
  deadline: tl.deadline(budgetS, clock),
});

describe("field-t19-timed-out-call-not-stuck-in-progress", () => {
  it("run 1 ends UNKNOWN at its 3 s deadline (not PENDING); run 2 at t=60 probes, then resends once with K → SUCCEEDED", async () => {
    const tl = new Timeline(S);
    tl.start();
    const run1 = await executor().call(submit(tl, 3));
    expect(tl.t()).toBeGreaterThanOrEqual(3);
    expect(run1).toMatchObject({ status: "UNKNOWN", retry_safe: false, attempt: 1, error: { code: "READ_TIMEOUT" } });
    const record1 = await store.get(run1.idempotency_key);
    expect(record1?.status).toBe("UNKNOWN");
    expect(remote.posts).toBe(1);

    await tl.until(60);
    const run2 = await executor().call(submit(tl, 20));
    expect(run2).toMatchObject({
      status: "SUCCEEDED",
      retry_safe: true,
      attempt: 2,
      resolution: "absent_resent",
      idempotency_key: run1.idempotency_key,
    });
    expect(run2.error?.code).not.toBe("IN_FLIGHT");
    const probes = await eventsOf(store, run1.idempotency_key, "probe");
    expect(probes.map((p) => p.data.answer)).toEqual(["absent", "absent", "absent"]);
    expect(remote.posts).toBe(2); // attempts: 2
    expect(remote.keysSeen).toEqual([run1.idempotency_key, run1.idempotency_key]);
    expect(remote.effects).toHaveLength(1);
  });

  it("variant: run 2 only after the 24 h key retention → no resend on a key probe's 'absent'; human queue", async () => {
    const tl = new Timeline(S);
    const run1 = await executor().call(submit(tl, 3));
    expect(run1.status).toBe("UNKNOWN");
    await tl.until(12); // the remote dropped the request without committing

    clock.jump(25 * 3600_000);
    const run2 = await executor().call(submit(tl, 20));
    expect(run2).toMatchObject({
      status: "UNKNOWN",
      retry_safe: false,
      resolution: "needs_human",
      error: { code: "KEY_RETENTION_EXPIRED" },
    });
    expect(remote.posts).toBe(1);
    expect(remote.effects).toHaveLength(0);
  });
});
