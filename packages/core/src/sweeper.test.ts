import { FakeClock } from "@tristate/testing";
import { describe, expect, it } from "vitest";
import { canon } from "./canon.ts";
import { createExecutor } from "./executor.ts";
import { MemoryIntentStore } from "./memory-intent-store.ts";
import { nextSweepLimit, type SweepReport, sweepStale } from "./sweeper.ts";
import { defineTool } from "./tool.ts";

/** Claims record `key` (step `s<i>`) as a crash leaves it: PENDING, its lease passed a second ago. */
async function leftPending(store: MemoryIntentStore, clock: FakeClock, key: string, i: number): Promise<void> {
  const claimed = await store.claim(
    {
      key,
      runId: "r",
      stepId: `s${i}`,
      tool: "refund",
      args: { order: `o-${i}` },
      identity: { order: `O-${i}` },
      attempt: 1,
      leaseUntilEpochMs: clock.nowEpochMs() - 1_000,
      createdAtEpochMs: clock.nowEpochMs() - 2_000,
      compensation: null,
      traceId: null,
    },
    [],
    clock.nowEpochMs(),
  );
  expect(claimed.claimed).toBe(true);
}

describe("sweepStale: one lease per pass", () => {
  it("reconciles each record within what is left of the pass's lease, and leaves those whose turn comes past half of it", async () => {
    const clock = new FakeClock();
    const store = new MemoryIntentStore({ clock });
    const PROBE_MS = 600; // real time: the probes of the records ahead eat the pass's lease
    const passStart = performance.now();
    const started: number[] = [];
    const tool = defineTool({
      name: "refund",
      kind: "idempotent_by_key",
      identity: { order: canon.upper },
      timeoutMs: 1000,
      invoke: async () => {
        throw new Error("the sweep never sends: the probe finds each effect");
      },
      probe: async () => {
        started.push(performance.now() - passStart);
        await new Promise((resolve) => setTimeout(resolve, PROBE_MS));
        return { id: "found" };
      },
    });
    const keys: string[] = [];
    for (let i = 0; i < 5; i++) {
      const key = `${String(i).repeat(32)}`;
      keys.push(key);
      await leftPending(store, clock, key, i);
    }
    const executor = createExecutor({
      store,
      tools: [tool],
      clock,
      probe: { attempts: 1, spacingMs: 0, timeoutMs: 1_000 },
      reserveMs: 100,
      minCallBudgetMs: 100,
    });
    const report = await sweepStale({ store, executor, limit: 10, budgetMs: 3_000, concurrency: 1 });

    expect(report.taken).toBe(5);
    expect(report.results.length + report.left.length).toBe(5);
    expect(report.results.length).toBeGreaterThanOrEqual(1);
    expect(report.left.length).toBeGreaterThanOrEqual(1); // 3 × 600 ms > half of 3 s
    // No reconciliation started with less than half of the lease left (1.5 s of 3 s; its probe follows
    // the check by a few ms). Without the rule the fourth and fifth would start at ≈ 1.8 and 2.4 s.
    expect(Math.max(...started)).toBeLessThan(1_700);
    for (const r of report.results) expect(r.envelope).toMatchObject({ status: "SUCCEEDED", resolution: "found" });
    // The records left are UNKNOWN, leased to the pass until its lease passes, then due again.
    for (const key of report.left) {
      expect(await store.get(key)).toMatchObject({ status: "UNKNOWN", leaseUntilEpochMs: clock.nowEpochMs() + 3_000 });
    }
    clock.advance(3_001);
    const next = await sweepStale({ store, executor, limit: 10, budgetMs: 30_000, concurrency: 5 });
    expect(next.results.map((r) => r.key).sort()).toEqual([...report.left].sort());
    for (const key of keys) expect(await store.get(key)).toMatchObject({ status: "SUCCEEDED" });
  });

  it("a pass whose budget cannot fit one probe round does not count towards the human queue", async () => {
    const clock = new FakeClock();
    const store = new MemoryIntentStore({ clock });
    let probes = 0;
    const tool = defineTool({
      name: "refund",
      kind: "idempotent_by_key",
      identity: { order: canon.upper },
      timeoutMs: 1000,
      invoke: async () => ({ ok: true }),
      probe: async () => {
        probes++;
        return { id: "found" };
      },
    });
    const key = "a".repeat(32);
    await leftPending(store, clock, key, 0);
    // Default reserve (2 s) and minimum call budget (1 s): a 3 s lease leaves no room for a probe.
    const executor = createExecutor({ store, tools: [tool], clock, maxReconcileSweeps: 2 });
    for (let pass = 0; pass < 4; pass++) {
      const report = await sweepStale({ store, executor, budgetMs: 3_000 });
      expect(report.taken).toBe(1);
      expect(report.results[0]?.envelope).toMatchObject({ status: "UNKNOWN", error: { code: "DEADLINE_EXCEEDED" } });
      clock.advance(3_001);
    }
    expect(probes).toBe(0);
    expect(await store.get(key)).toMatchObject({ status: "UNKNOWN", needsHuman: false, reconcileSweeps: 0 });
    // With room to probe, the next pass finds the effect.
    await sweepStale({ store, executor, budgetMs: 30_000 });
    expect(await store.get(key)).toMatchObject({ status: "SUCCEEDED", resolution: "found" });
    expect(probes).toBe(1);
  });
});

describe("nextSweepLimit: records per pass, after slow passes", () => {
  const report = (reconciled: number, left: number): SweepReport => ({
    taken: reconciled + left,
    results: Array.from({ length: reconciled }, (_, i) => ({ key: `k${i}` })),
    left: Array.from({ length: left }, (_, i) => `l${i}`),
  });
  it("takes what a pass that had to leave records reconciled, never below the concurrency; grows back when passes finish", () => {
    expect(nextSweepLimit(1000, report(320, 680), 1000, 64)).toBe(320);
    expect(nextSweepLimit(1000, report(10, 990), 1000, 64)).toBe(64);
    expect(nextSweepLimit(320, report(320, 0), 1000, 64)).toBe(640);
    expect(nextSweepLimit(640, report(100, 0), 1000, 64)).toBe(1000);
    expect(nextSweepLimit(1000, report(0, 0), 1000, 64)).toBe(1000);
  });
});
