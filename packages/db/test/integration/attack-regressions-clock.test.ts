/**
 * Regressions of the attack on "never a duplicate effect, never a silent gap" (fixed in 3599041),
 * clock part (DESIGN.md rules 9 and 10): executor replicas whose clocks disagree with PostgreSQL's,
 * on the real database (a database of its own) against a real loopback remote. The evidence part is
 * attack-regressions.test.ts.
 *
 * - B5: a replica whose clock runs ahead (100 ms, 2 s, 60 s) claims a call: the record's `created_at`
 *   (the identity probe's `since`) is never after the effect, so the probe finds it; no resend.
 * - B6: a replica 60 s behind making a new attempt, or whose sweeper resends: the settle window it
 *   writes is in the store's clock (never in the past), so a late-applied effect is found, not resent.
 * - B7: a late PARTIAL_EFFECT answer, after a sweeper took the record over and found "the effect",
 *   sends the record to the human queue (a probe finding the effect says nothing of the failed part).
 * - B11: a late 201 after an operator's confirm_no_effect of the same attempt settles SUCCEEDED and
 *   reopens the record for a person (the evidence contradicts the decision: issue 20 §4, rule 16).
 */
import { randomUUID } from "node:crypto";
import { type AnyTool, Deadline, type Executor, legacyDeadline, shownRecord, sweepStale } from "@tristate/core";
import { type FakeRemote, refundTool, startFakeRemote } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { PrismaOperatorStore } from "../../src/operator-store.ts";
import type { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { Cleanup, sleep, sleepPast, waitUntil } from "./helpers.ts";
import {
  freshStores,
  mustGet,
  refund,
  skewedClock,
  sweepKey,
  timingExecutor,
} from "./reconciliation-timing.support.ts";

const AHEAD = [100, 2000, 60_000];
const BEHIND_MS = -60_000;
/** Settle window of the unsafe refund tools, ms: how long after an answer the remote may still apply it. */
const SETTLE_MS = 1500;
const TIMEOUT_MS = 500;

describe("attack regressions: replicas' clocks (real PostgreSQL)", () => {
  const cleanup = new Cleanup();
  let store: PrismaIntentStore;
  let ops: PrismaOperatorStore;
  let n = 0;

  beforeEach(async () => {
    ({ store, ops } = await freshStores(cleanup));
  });
  afterEach(() => cleanup.run());

  async function remoteFor(honorsKey: boolean): Promise<FakeRemote> {
    return cleanup.add(await startFakeRemote({ honorsKey }), (r) => r.close());
  }
  /** An unsafe refund with an identity probe only and a settle window: absence is proof once it passed. */
  const unsafeRefund = (remote: FakeRemote): AnyTool =>
    refundTool(remote, { kind: "unsafe", settleMs: SETTLE_MS, probe: undefined, timeoutMs: TIMEOUT_MS });
  const nextInput = (tag: string) => ({
    runId: `run-${tag}-${++n}`,
    stepId: "refund",
    tool: "issue_refund",
    args: refund(`${tag.toUpperCase()}-${n}`),
  });
  const inQueue = async (key: string) => (await ops.listNeedsHuman()).records.some((r) => r.key === key);

  /** Sweeps `key` with `ex` until it is settled or in the human queue (at most `passes` passes). */
  async function sweepUntilSettled(ex: Executor, key: string, passes: number) {
    for (let i = 0; i < passes; i++) {
      const record = await mustGet(store, key);
      if (record.status !== "UNKNOWN" && record.status !== "PENDING") return;
      if (record.needsHuman) return;
      await sleepPast(Math.min(legacyDeadline(record), Date.now() + 2500));
      await sweepKey(store, ex, key);
    }
  }

  describe("B5: a replica whose clock runs ahead never moves the identity probe's `since` past the effect", () => {
    for (const offset of AHEAD) {
      it(`clock +${offset} ms: created_at ≤ the effect, every identity probe's since ≤ the effect; SUCCEEDED found, 1 effect`, async () => {
        const remote = await remoteFor(false);
        const ahead = timingExecutor(store, [unsafeRefund(remote)], { clock: skewedClock(offset) });
        const sweeper = timingExecutor(store, [unsafeRefund(remote)]);
        const input = nextInput("b5");
        const key = ahead.keyFor(input);
        remote.fault({ answer: "reset" }); // committed, then the connection resets before the answer
        const told = await ahead.call({ ...input, deadline: Deadline.after(1000, ahead.clock) });
        await sweepUntilSettled(sweeper, key, 6);

        expect(remote.effects).toHaveLength(1);
        expect(remote.posts).toBe(1);
        const effect = remote.effects[0]!;
        const record = await mustGet(store, key);
        expect(record.createdAtEpochMs).toBeLessThanOrEqual(effect.committedAtEpochMs);
        const sinces = remote.requests
          .filter((r) => r.method === "GET")
          .map((r) => Number(new URL(r.url, "http://x").searchParams.get("since")));
        expect(sinces.length).toBeGreaterThan(0);
        for (const since of sinces) expect(since).toBeLessThanOrEqual(effect.committedAtEpochMs);
        expect(record).toMatchObject({ status: "SUCCEEDED", resolution: "found", attempt: 1 });
        expect(record.result).toMatchObject({ id: effect.id });
        expect(told).toMatchObject({ status: "SUCCEEDED", resolution: "found" });
      });
    }
  });

  describe("B6: a replica 60 s behind writes its settle windows in the store's clock", () => {
    it("a new attempt after a refusal, on the replica behind: its settle window is not in the past; the effect the remote applies 1500 ms later is found, not resent (1 effect)", async () => {
      const remote = await remoteFor(false);
      const correct = timingExecutor(store, [unsafeRefund(remote)]);
      const behind = timingExecutor(store, [unsafeRefund(remote)], { clock: skewedClock(BEHIND_MS) });
      const input = nextInput("b6a");
      const key = correct.keyFor(input);
      remote.fault({ commit: false, answer: 400 });
      expect(await correct.call({ ...input, deadline: Deadline.after(1000) })).toMatchObject({
        status: "FAILED_NO_EFFECT",
        retry_safe: true,
      });

      remote.fault({ commitDelayMs: 1500 }); // applied after the client's 500 ms timeout
      const sentAt = await store.clockEpochMs();
      const told = await behind.call({ ...input, deadline: Deadline.after(1200, behind.clock) });
      expect(told).toMatchObject({ status: "UNKNOWN", retry_safe: false, attempt: 2 });
      expect(remote.posts).toBe(2);
      const waiting = await mustGet(store, key);
      expect(waiting.settlesAtEpochMs).not.toBeNull();
      expect(waiting.settlesAtEpochMs!).toBeGreaterThanOrEqual(sentAt + TIMEOUT_MS + SETTLE_MS);

      await waitUntil(() => remote.effects.length === 1, "the late-applied effect");
      await sweepUntilSettled(correct, key, 6);
      expect(remote.effects).toHaveLength(1);
      expect(remote.posts).toBe(2);
      expect(await mustGet(store, key)).toMatchObject({ status: "SUCCEEDED", resolution: "found", attempt: 2 });
    });

    for (const budgetMs of [3000, undefined]) {
      it(`the sweeper of the replica behind resends (budget ${budgetMs ?? "default 30000"} ms): the resend's settle window is not in the past; the next sweeps by a correct replica do not resend again (1 effect)`, async () => {
        const remote = await remoteFor(false);
        const correct = timingExecutor(store, [unsafeRefund(remote)]);
        const behind = timingExecutor(store, [unsafeRefund(remote)], { clock: skewedClock(BEHIND_MS) });
        const input = nextInput("b6b");
        const key = correct.keyFor(input);
        remote.fault({ commit: false, answer: "hang" });
        expect(await correct.call({ ...input, deadline: Deadline.after(1000) })).toMatchObject({ status: "UNKNOWN" });
        await sleepPast(legacyDeadline(await mustGet(store, key))); // the original's window passed: absent is proof

        remote.fault({ commitDelayMs: 1500 }); // the resend is applied after the client's timeout
        const sentAt = await store.clockEpochMs();
        const report = await sweepStale({ store, executor: behind, ...(budgetMs ? { budgetMs } : {}) });
        expect(report.results.map((r) => r.key)).toContain(key);
        expect(remote.posts).toBe(2); // the resend
        const resent = await mustGet(store, key);
        expect(resent).toMatchObject({ status: "UNKNOWN", attempt: 2 });
        expect(resent.settlesAtEpochMs).not.toBeNull();
        expect(resent.settlesAtEpochMs!).toBeGreaterThanOrEqual(sentAt + TIMEOUT_MS + SETTLE_MS);

        // A correct replica's sweeps while the remote may still apply the resend: probes only.
        for (let i = 0; i < 2; i++) {
          await sweepKey(store, correct, key);
          await sleep(100);
        }
        await waitUntil(() => remote.effects.length === 1, "the late-applied resend");
        if (budgetMs) {
          await sweepUntilSettled(correct, key, 6);
          expect(await mustGet(store, key)).toMatchObject({ status: "SUCCEEDED", resolution: "found", attempt: 2 });
        }
        expect(remote.posts).toBe(2);
        expect(remote.effects).toHaveLength(1);
      });
    }
  });

  describe("B8: Retry-After is one instant for every replica (the store's clock)", () => {
    for (const status of [503, 429] as const) {
      it(`${status} with Retry-After: 30 answered to A; B (clock 60 s ahead) repeats the call 1 s later and sends nothing`, async () => {
        const remote = await remoteFor(true);
        const tool = refundTool(remote, { timeoutMs: TIMEOUT_MS });
        const A = timingExecutor(store, [tool]);
        const B = timingExecutor(store, [tool], { clock: skewedClock(60_000) });
        const input = nextInput(`ra${status}`);
        remote.fault({ commit: false, answer: status, headers: { "retry-after": "30" } });
        const first = await A.call({ ...input, deadline: Deadline.after(5_000) });
        expect(first.retry_safe).toBe(status === 429);
        const record = await mustGet(store, first.idempotency_key);
        const storeNow = await store.clockEpochMs();
        expect(record.error?.retryNotBeforeEpochMs).toBeGreaterThan(storeNow + 25_000);
        await sleep(1_000);
        const postsBefore = remote.posts;
        const repeat = await B.call({ ...input, deadline: Deadline.after(5_000, skewedClock(60_000)) });
        expect(remote.posts).toBe(postsBefore);
        expect(repeat.status).toBe(first.status);
        expect(remote.effects).toHaveLength(0);
      });
    }
  });

  describe("B7/B11: late answers (rule 10)", () => {
    it("B7: a late PARTIAL_EFFECT (207) after a sweeper took the record over and found the effect → UNKNOWN in the human queue (PARTIAL_EFFECT), never SUCCEEDED; the owner's agent is told UNKNOWN; nothing resent", async () => {
      const remote = await remoteFor(true);
      const tool = refundTool(remote, { timeoutMs: 1000 });
      const owner = timingExecutor(store, [tool], { clock: skewedClock(BEHIND_MS) }); // its lease is past at once
      const sweeper = timingExecutor(store, [tool]);
      const input = nextInput("b7");
      const key = owner.keyFor(input);
      remote.fault({ answer: 207, respondDelayMs: 400 }); // committed at once, answered 207 Multi-Status late
      const call = owner.call({ ...input, deadline: Deadline.after(5000, owner.clock) });
      await waitUntil(() => remote.posts === 1, "the owner's request at the remote");
      await sleep(50);

      const swept = await sweepKey(store, sweeper, key);
      expect(swept?.envelope, "the sweeper must take the record over before the late answer").toMatchObject({
        status: "SUCCEEDED",
        resolution: "found",
      });
      const told = await call;
      expect(told).toMatchObject({ status: "UNKNOWN", retry_safe: false, error: { code: "PARTIAL_EFFECT" } });

      const record = await mustGet(store, key);
      expect(shownRecord(record)).toMatchObject({ status: "UNKNOWN", needsHuman: true, resolution: "needs_human" });
      expect(record.error?.code).toBe("PARTIAL_EFFECT");
      const late = (await store.listEvents(key)).filter((e) => e.type === "late_answer");
      expect(late.map((e) => e.data.code)).toEqual(["PARTIAL_EFFECT"]);
      expect(await inQueue(key)).toBe(true);

      // A repeat call (probes would "find" the effect) does not take it out of the queue.
      const again = await sweeper.call({ ...input, deadline: Deadline.after(5000) });
      expect(again).toMatchObject({ status: "UNKNOWN", retry_safe: false });
      expect(await mustGet(store, key)).toMatchObject({ status: "UNKNOWN", needsHuman: true });
      expect(remote.posts).toBe(1);
      expect(remote.effects).toHaveLength(1);
    });

    it("B11: the owner's 201 arrives after an operator's confirm_no_effect of the same attempt → SUCCEEDED found, reopened for a person (rule 16); the agent is told SUCCEEDED and its retry replays (1 effect)", async () => {
      const remote = await remoteFor(false);
      const tool = refundTool(remote, {
        kind: "unsafe",
        probe: undefined,
        probeByIdentity: undefined,
        timeoutMs: 1000,
      });
      const owner = timingExecutor(store, [tool], { clock: skewedClock(BEHIND_MS) }); // the dashboard sees a stale PENDING
      const operatorSide = timingExecutor(store, [tool]);
      const input = nextInput("b11");
      const key = owner.keyFor(input);
      remote.fault({ respondDelayMs: 500 });
      const call = owner.call({ ...input, deadline: Deadline.after(3000, owner.clock) });
      await waitUntil(() => remote.posts === 1, "the owner's request at the remote");

      const stale = await mustGet(store, key);
      expect(stale.status).toBe("PENDING");
      const confirmed = await operatorSide.resolve(
        {
          key,
          action: "confirm_no_effect",
          note: "stale PENDING for a minute, the remote shows nothing",
          expectedVersion: stale.version,
          operatorActionId: randomUUID(),
          actor: { keyId: "key-ops", name: "ops" },
        },
        ops,
      );
      expect(confirmed.record).toMatchObject({ status: "FAILED_NO_EFFECT", resolution: "human_confirmed_no_effect" });

      const told = await call;
      expect(told).toMatchObject({ status: "SUCCEEDED", attempt: 1 });
      const record = await mustGet(store, key);
      expect(record).toMatchObject({
        status: "SUCCEEDED",
        resolution: "found",
        needsHuman: true,
        error: { code: "CONTRADICTING_EVIDENCE" },
        attempt: 1,
      });
      expect(record.result).toMatchObject({ id: remote.effects[0]!.id });
      const late = (await store.listEvents(key)).filter((e) => e.type === "late_answer");
      expect(late.map((e) => e.data.outcome)).toEqual(["SUCCEEDED"]);

      const retry = await owner.call({ ...input, deadline: Deadline.after(3000, owner.clock) });
      expect(retry).toMatchObject({ status: "SUCCEEDED", replayed: true });
      expect(remote.posts).toBe(1);
      expect(remote.effects).toHaveLength(1);
    });
  });
});
