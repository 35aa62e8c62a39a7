/**
 * T21 — Once the lease expires, a withdrawal can be re-run unless it is reconciled first
 * (Powertools Python). Source: https://github.com/aws-powertools/powertools-lambda-python/issues/8049.
 *
 * Remote `wallet-api` (the shared fake remote without key support; `POST /effects` stands for
 * `POST /withdrawals`): commits at t=11.5 and answers then. The key travels in the body as the
 * client reference; probe `GET /effects?clientRef=<key>` (for `GET /withdrawals?ref=<key>`).
 * Tool `wallet.withdraw` is `unsafe`.
 *
 * Scale: 1 case-second = 20 ms. Reserve 0 here, so run 1 uses its whole 10 s budget (UNKNOWN at
 * t=10, no budget left to probe) like the case.
 * Differences by design: run 2 probes at +0, +1, +3 s (t=11, 12, 14; the first is absent since the
 * commit lands at 11.5), not 12, 13, 15. Run 1 already recorded UNKNOWN, so run 2 finds an UNKNOWN
 * record rather than an expired PENDING lease; either way it reconciles before anything else.
 */

import { type FakeRemote, startFakeRemote } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canon } from "../../src/canon.ts";
import { createExecutor } from "../../src/executor.ts";
import { MemoryIntentStore } from "../../src/memory-intent-store.ts";
import { clientRefTool, eventsOf, scaledOptions, Timeline } from "./support.ts";

const S = 20;
let remote: FakeRemote;
let store: MemoryIntentStore;

beforeEach(async () => {
  remote = await startFakeRemote({ honorsKey: false });
  store = new MemoryIntentStore();
});
afterEach(async () => {
  await remote.close();
});

function withdrawTool() {
  return clientRefTool(remote.url, {
    name: "wallet.withdraw",
    identity: { accountRef: canon.upper, payoutRef: canon.upper },
    timeoutMs: 30 * S, // read timeout 30 s
  });
}

const executor = () => createExecutor({ store, tools: [withdrawTool()], ...scaledOptions(S, { reserveS: 0 }) });
const withdraw = (tl: Timeline, budgetS: number) => ({
  runId: "run-21",
  stepId: "withdraw",
  tool: "wallet.withdraw",
  args: { accountRef: "ACC-0001", amountCents: 10000, payoutRef: "PO-0001" },
  deadline: tl.deadline(budgetS),
});

describe("field-t21-reconcile-before-rerun", () => {
  it("run 2 at t=11 reconciles first, with no POST: the probe at t=12 finds the withdrawal → SUCCEEDED", async () => {
    const tl = new Timeline(S);
    remote.fault({ commitDelayMs: 11.5 * S });
    tl.start();
    const run1 = await executor().call(withdraw(tl, 10));
    expect(tl.t()).toBeGreaterThanOrEqual(10);
    expect(run1).toMatchObject({ status: "UNKNOWN", retry_safe: false, attempt: 1 });
    expect(remote.effects).toHaveLength(0);

    await tl.until(11);
    const run2 = await executor().call(withdraw(tl, 20));
    expect(run2).toMatchObject({
      status: "SUCCEEDED",
      retry_safe: true,
      attempt: 1,
      resolution: "found",
      idempotency_key: run1.idempotency_key,
    });
    expect(tl.t()).toBeGreaterThanOrEqual(11.5);
    expect(remote.posts).toBe(1);
    expect(remote.effects).toHaveLength(1);
    expect((await eventsOf(store, run1.idempotency_key)).map((e) => e.type)).not.toContain("resend");
  });

  it("variant: the remote never commits → run 2's probes are absent → UNKNOWN, not retry_safe, no resend", async () => {
    const tl = new Timeline(S);
    remote.fault({ commit: false, answer: "hang" });
    tl.start();
    const run1 = await executor().call(withdraw(tl, 10));
    expect(run1).toMatchObject({ status: "UNKNOWN", retry_safe: false });

    await tl.until(11);
    const run2 = await executor().call(withdraw(tl, 20));
    expect(run2).toMatchObject({
      status: "UNKNOWN",
      retry_safe: false,
      attempt: 1,
      resolution: "needs_human",
      error: { code: "PROBES_ABSENT_NO_DEDUPE" },
    });
    const probes = await eventsOf(store, run1.idempotency_key, "probe");
    expect(probes.map((p) => p.data.answer)).toEqual(["absent", "absent", "absent"]);
    expect(remote.posts).toBe(1);
    expect(remote.effects).toHaveLength(0);
  });
});
