/**
 * Issue 9 §1 "Absent must be conclusive before anything is resent" (DESIGN.md rule 5b), on the real
 * PostgreSQL against a real loopback remote that does not deduplicate (an `unsafe` remote): the
 * remote commits a refund but keeps it invisible to lookups for L ms, and the answer is lost (reset,
 * 504, or no answer at all). Probes run at +0, +50, +150 ms; lags and latencies are chosen beyond
 * that window. A resend before the tool's settle window S is over would make a second refund.
 */
import { Deadline, type Executor, legacyDeadline } from "@tristate/core";
import { type FakeRemote, type Fault, refundTool, startFakeRemote } from "@tristate/testing";
import fc from "fast-check";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { createTestDatabase, type TestDatabase } from "../../src/test-database.ts";
import { Cleanup, sleep, sleepPast } from "./helpers.ts";
import {
  eventTypes,
  mustGet,
  PROBE_WINDOW_MS,
  probeEvents,
  refund,
  sweepKey,
  timingExecutor,
} from "./reconciliation-timing.support.ts";

/** The tool's own timeout: an answer that never comes is given up after this. */
const TOOL_TIMEOUT_MS = 300;

describe("issue 9 §1: absent must be conclusive before an unsafe refund is resent (real PostgreSQL)", () => {
  const files = new Cleanup();
  const cleanup = new Cleanup();
  let db: TestDatabase;
  let store: PrismaIntentStore;
  let remote: FakeRemote;
  let n = 0;

  beforeAll(async () => {
    db = files.add(await createTestDatabase(), (d) => d.drop());
    store = files.add(new PrismaIntentStore({ databaseUrl: db.url, poolSize: 4 }), (s) => s.close());
  });
  afterAll(() => files.run());
  afterEach(() => cleanup.run());

  /** A fresh remote that never deduplicates by key (so a resend after a landed original is a duplicate). */
  async function freshRemote(): Promise<FakeRemote> {
    return cleanup.add(await startFakeRemote({ honorsKey: false }), (r) => r.close());
  }

  /** An `unsafe` refund with only the identity probe (no key support at the remote). */
  function unsafeRefund(settleMs: number | undefined) {
    return refundTool(remote, {
      kind: "unsafe",
      probe: undefined,
      timeoutMs: TOOL_TIMEOUT_MS,
      ...(settleMs === undefined ? {} : { settleMs }),
    });
  }

  /** One agent call of a fresh step and order (the order keeps identity probes of other tests apart). */
  function callRefund(executor: Executor) {
    const i = ++n;
    const input = {
      runId: `run-settle-${i}`,
      stepId: "step-1",
      tool: "issue_refund",
      args: refund(`S-${i}`),
      deadline: Deadline.after(5000),
    };
    return {
      input,
      envelope: executor.call(input),
      repeat: () => executor.call({ ...input, deadline: Deadline.after(5000) }),
    };
  }

  it("lag beyond the probe window, within S: nothing is resent before last send + S; the sweeper's probe after the window finds it → SUCCEEDED found, 1 effect", async () => {
    // Wide margins: probes that run slow on a loaded machine must still end before the lag does.
    const L = 1600;
    const S = 2200;
    remote = await freshRemote();
    const executor = timingExecutor(store, [unsafeRefund(S)]);
    remote.fault({ visibleAfterMs: L, answer: "reset" });

    const call = callRefund(executor);
    const env = await call.envelope;
    // The probes (≈ PROBE_WINDOW_MS) saw nothing, and that is not proof yet: UNKNOWN, do not retry.
    expect(env).toMatchObject({ status: "UNKNOWN", retry_safe: false, error: { code: "ABSENCE_NOT_CONCLUSIVE" } });
    expect(remote.posts).toBe(1);
    expect(remote.effects).toHaveLength(1);
    const key = env.idempotency_key;
    const waiting = await mustGet(store, key);
    expect(waiting).toMatchObject({ status: "UNKNOWN", attempt: 1, needsHuman: false, resolution: null });
    const events = await store.listEvents(key);
    expect(events.map((e) => e.type)).toEqual(["created", "sent", "outcome", "probe", "probe", "probe"]);
    expect(events[2]!.data).toMatchObject({ outcome: "UNKNOWN", code: "RESET_AFTER_WRITE" });
    expect(probeEvents(events).map(({ data: { durationMs: _ms, ...rest } }) => rest)).toEqual(
      [1, 2, 3].map((round) => ({ probe: "identity", round, answer: "absent" })),
    );
    // The window runs from the end of the send (store clock), and the sweeper is due exactly then.
    const sent = events[1]!;
    const sendEnd = sent.atEpochMs + Number(events[2]!.data.durationMs);
    const settlesAt = waiting.settlesAtEpochMs!;
    expect(settlesAt).toBeGreaterThanOrEqual(sendEnd + S - 5);
    expect(settlesAt).toBeLessThan(sendEnd + S + 200);
    expect(waiting.recheckAtEpochMs).toBe(settlesAt);
    expect(remote.effects[0]!.visibleAtEpochMs).toBeGreaterThan(Date.now()); // still hidden

    // The agent asks again while the refund is still hidden: probes, nothing found, nothing resent.
    const again = await call.repeat();
    expect(again).toMatchObject({ status: "UNKNOWN", retry_safe: false, error: { code: "ABSENCE_NOT_CONCLUSIVE" } });
    expect(remote.posts).toBe(1);
    // The sweeper leaves the record alone until the window is over.
    while (Date.now() < settlesAt - 60) {
      expect(await sweepKey(store, executor, key)).toBeUndefined();
      expect(remote.posts).toBe(1);
      await sleep(100);
    }
    expect(await mustGet(store, key)).toMatchObject({ status: "UNKNOWN", attempt: 1, needsHuman: false });

    await sleepPast(settlesAt);
    const swept = await sweepKey(store, executor, key);
    expect(swept?.envelope).toMatchObject({ status: "SUCCEEDED", resolution: "found", retry_safe: true });
    expect(remote.posts).toBe(1);
    expect(remote.effects).toHaveLength(1);
    const done = await mustGet(store, key);
    expect(done).toMatchObject({
      status: "SUCCEEDED",
      resolution: "found",
      attempt: 1,
      needsHuman: false,
      error: null,
    });
    expect(done.result).toMatchObject({ id: remote.effects[0]!.id });
    const finalEvents = await store.listEvents(key);
    const found = probeEvents(finalEvents).find((e) => e.data.answer === "found")!;
    expect(found.atEpochMs).toBeGreaterThanOrEqual(settlesAt);
    expect(finalEvents.map((e) => e.type)).not.toContain("resend");
    expect(finalEvents.map((e) => e.type)).not.toContain("needs_human");
  });

  it("under-declared window (L > S): the sweeper's probes after settlesAt say absent and it resends — the duplicate is the declaration's fault, and the timeline shows every deciding probe ran after settlesAt", async () => {
    const L = 3000;
    const S = 400;
    remote = await freshRemote();
    const executor = timingExecutor(store, [unsafeRefund(S)]);
    remote.fault({ visibleAfterMs: L, answer: 504 });

    const env = await callRefund(executor).envelope;
    expect(env).toMatchObject({ status: "UNKNOWN", retry_safe: false, error: { code: "ABSENCE_NOT_CONCLUSIVE" } });
    const key = env.idempotency_key;
    const settlesAt = (await mustGet(store, key)).settlesAtEpochMs!;
    // Before the window is over, an explicit reconciliation (what a repeat call does) does not resend.
    const early = await executor.reconcileKey(key, Deadline.after(3000));
    expect(early).toMatchObject({ status: "UNKNOWN", error: { code: "ABSENCE_NOT_CONCLUSIVE" } });
    expect(remote.posts).toBe(1);

    await sleepPast(settlesAt);
    const swept = await sweepKey(store, executor, key);
    expect(swept?.envelope).toMatchObject({ status: "SUCCEEDED", resolution: "absent_resent", attempt: 2 });
    // The remote held the first refund all along, hidden for longer than the tool declared.
    expect(remote.effects).toHaveLength(2);
    expect(remote.effects[0]!.visibleAtEpochMs).toBeGreaterThan(settlesAt + PROBE_WINDOW_MS);
    const events = await store.listEvents(key);
    const sweep = events.findIndex((e) => e.type === "sweep");
    const resend = events.findIndex((e) => e.type === "resend");
    expect(sweep).toBeGreaterThan(0);
    expect(resend).toBeGreaterThan(sweep);
    const deciding = events.slice(sweep + 1, resend);
    expect(deciding.map((e) => [e.type, e.data.answer])).toEqual([
      ["probe", "absent"],
      ["probe", "absent"],
      ["probe", "absent"],
    ]);
    for (const e of [...deciding, events[resend]!]) expect(e.atEpochMs).toBeGreaterThanOrEqual(settlesAt);
    expect(remote.effects[1]!.committedAtEpochMs).toBeGreaterThanOrEqual(settlesAt);
  });

  it("the same tool WITHOUT settleMs: absent proves nothing — never resent, human queue, and a later re-check finds the refund: 1 effect", async () => {
    const L = 700;
    remote = await freshRemote();
    // Re-check the human queue quickly (150 ms, doubling) so the sweeper probes again within the test.
    const executor = timingExecutor(store, [unsafeRefund(undefined)], { humanRecheckMs: 150 });
    remote.fault({ visibleAfterMs: L, answer: "reset" });

    const env = await callRefund(executor).envelope;
    expect(env).toMatchObject({
      status: "UNKNOWN",
      retry_safe: false,
      resolution: "needs_human",
      error: { code: "PROBES_ABSENT_NO_DEDUPE" },
    });
    const key = env.idempotency_key;
    expect(await mustGet(store, key)).toMatchObject({ status: "UNKNOWN", needsHuman: true, settlesAtEpochMs: null });
    expect(await eventTypes(store, key)).toContain("needs_human");

    const giveUp = Date.now() + L + 3000;
    let record = await mustGet(store, key);
    while (record.status === "UNKNOWN" && Date.now() < giveUp) {
      await sleepPast(legacyDeadline(record));
      await sweepKey(store, executor, key);
      expect(remote.posts).toBe(1); // re-checks only probe
      record = await mustGet(store, key);
    }
    expect(record).toMatchObject({ status: "SUCCEEDED", resolution: "found", needsHuman: false });
    expect(remote.posts).toBe(1);
    expect(remote.effects).toHaveLength(1);
    expect(await eventTypes(store, key)).not.toContain("resend");
  });

  it("property: lag L, remote latency, settle S ≥ L + latency past the send, reset | 504 | hang, committed or not → ≤ 1 effect, and the record ends SUCCEEDED iff the effect exists (never FAILED_NO_EFFECT with one, never SUCCEEDED without one)", async () => {
    const seen: string[] = [];
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          lagMs: fc.integer({ min: 0, max: 600 }),
          // Up to past the tool's timeout: the original may land after the executor gave up on it.
          latencyMs: fc.integer({ min: 0, max: 450 }),
          // ≥ 25 ms: the remote's own timers may fire a little late.
          slackMs: fc.integer({ min: 25, max: 200 }),
          answer: fc.constantFrom<Fault["answer"]>("reset", 504, "hang"),
          commit: fc.boolean(),
        }),
        async ({ lagMs, latencyMs, slackMs, answer, commit }) => {
          const r = await startFakeRemote({ honorsKey: false });
          try {
            remote = r;
            // An honest, tight declaration: S covers the lag plus any apply time past the end of the send.
            const S = lagMs + Math.max(0, latencyMs - TOOL_TIMEOUT_MS) + slackMs;
            const executor = timingExecutor(store, [unsafeRefund(S)]);
            r.fault({ commit, commitDelayMs: latencyMs, visibleAfterMs: lagMs, answer });
            const env = await callRefund(executor).envelope;
            expect(["SUCCEEDED", "UNKNOWN"]).toContain(env.status);
            if (env.status === "UNKNOWN") expect(env.retry_safe).toBe(false);
            const key = env.idempotency_key;
            let record = await mustGet(store, key);
            for (let pass = 0; pass < 6 && record.status === "UNKNOWN" && !record.needsHuman; pass++) {
              expect(legacyDeadline(record) - Date.now(), "next pass due soon").toBeLessThan(3000);
              await sleepPast(legacyDeadline(record));
              await sweepKey(store, executor, key);
              record = await mustGet(store, key);
            }
            await sleep(latencyMs > TOOL_TIMEOUT_MS ? 50 : 0); // let a late original finish at the remote
            const effects = r.effects.length;
            seen.push(
              `L=${lagMs} lat=${latencyMs} S=${S} ${answer}/${commit ? "commit" : "none"} → ${record.status}/${record.resolution} (${effects})`,
            );
            expect(effects).toBeLessThanOrEqual(1);
            if (record.status === "SUCCEEDED") expect(effects).toBe(1);
            if (record.status === "FAILED_NO_EFFECT") expect(effects).toBe(0);
            if (effects === 1) expect(["SUCCEEDED", "UNKNOWN"]).toContain(record.status);
            // S covers lag + late apply, so every run settles: found when committed, else resent once.
            expect(record).toMatchObject({ status: "SUCCEEDED", resolution: commit ? "found" : "absent_resent" });
            expect(effects).toBe(1);
          } finally {
            await r.close();
          }
        },
      ),
      { numRuns: 10, endOnFailure: true },
    );
    console.log(`§1 property runs: ${seen.join("; ")}`);
  }, 60_000);
});
