import { type FakeRemote, startFakeRemote } from "@tristate/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { QueryInputError, type ReliabilityStats, statsOverview } from "../../src/queries/index.ts";
import { createTestDatabase, type TestDatabase } from "../../src/test-database.ts";
import { BUCKETS, type Seeded, seedDataset, WINDOW_MS } from "./seed.ts";

let db: TestDatabase;
let remote: FakeRemote;
let store: PrismaIntentStore;
let seeded: Seeded;

beforeAll(async () => {
  db = await createTestDatabase();
  remote = await startFakeRemote();
  store = new PrismaIntentStore({ databaseUrl: db.url, poolSize: 4 });
  seeded = await seedDataset(store, remote);
}, 120_000);
afterAll(async () => {
  await store?.close();
  await remote?.close();
  await db?.drop();
});

const overview = () =>
  statsOverview(store.prisma, {
    fromEpochMs: seeded.from,
    toEpochMs: seeded.to,
    staleNowEpochMs: seeded.staleNow,
    toolTimeoutsMs: seeded.toolTimeoutsMs,
    buckets: BUCKETS,
  });

/** Sparkline calls/unknown per slice as [slice, calls, unknown] for the slices with calls. */
const slices = (s: ReliabilityStats) =>
  s.sparkline.flatMap((p, i) => (p.calls > 0 ? [[i, p.calls, p.unknownCount] as const] : []));

describe("statsOverview (real PostgreSQL, data from real calls with injected faults)", () => {
  it("issue_refund: calls, UNKNOWN count and share, resolution breakdown, stale PENDING, previous period", async () => {
    const o = await overview();
    expect(o.tools.map((t) => t.tool)).toEqual(["issue_refund", "never_called", "slow_export", "unsafe_refund"]);
    const refund = o.tools.find((t) => t.tool === "issue_refund")!;
    // 6 succeeded + 3 found + 2 absent→resent + 2 failed + 1 resent-then-refused + 2 stale + 1 fresh PENDING.
    expect(refund.calls).toBe(17);
    expect(refund.unknownCount).toBe(6);
    expect(refund.unknownShare).toBeCloseTo(6 / 17, 12);
    expect(refund.resolutions).toEqual({
      found: 3,
      absent_resent: 2, // resent and settled; the resend refused is still open (rule 5f)
      human_confirmed_effect: 0,
      human_confirmed_no_effect: 0,
      human_resent: 0,
      open: 1,
      other: 0,
    });
    expect(refund.compensationsRun).toBe(0);
    expect(refund.compensationsFailed).toBe(0);
    expect(refund.stalePendingCount).toBe(2);
    expect(refund.oldestStalePendingAgeMs).toBe(60_100);
    expect(refund.previous).toEqual({
      fromEpochMs: seeded.from - WINDOW_MS,
      toEpochMs: seeded.from,
      calls: 4,
      unknownCount: 1,
      unknownShare: 0.25,
    });
    expect(refund.unknownShareChange).toBeCloseTo(6 / 17 - 0.25, 12);
    // Stale orphans were created 65 s and 35 s before the real calls: slices 16 and 17; the calls: 18.
    expect(slices(refund)).toEqual([
      [16, 1, 0],
      [17, 1, 0],
      [18, 15, 6],
    ]);
    expect(refund.sparkline[18]!.unknownShare).toBeCloseTo(6 / 15, 12);
    expect(refund.sparkline[0]!.unknownShare).toBeNull();
    // Sends with a duration: 6 + 3 (the UNKNOWN first send) + 2×2 (UNKNOWN, resend) + 2 + 2 (UNKNOWN, refused resend).
    expect(refund.latency.samples).toBe(17);
    expect(refund.latency.p50Ms).not.toBeNull();
    expect(refund.latency.p50Ms!).toBeLessThanOrEqual(refund.latency.p95Ms!);
    expect(refund.latency.p95Ms!).toBeLessThanOrEqual(refund.latency.p99Ms!);
    expect(refund.timeoutMs).toBe(500);
  });

  it("unsafe_refund: needs_human, human-confirmed effect and no-effect", async () => {
    const unsafe = (await overview()).tools.find((t) => t.tool === "unsafe_refund")!;
    expect(unsafe).toMatchObject({ calls: 4, unknownCount: 3, unknownShare: 0.75, stalePendingCount: 0 });
    expect(unsafe.oldestStalePendingAgeMs).toBeNull();
    expect(unsafe.resolutions).toEqual({
      found: 0,
      absent_resent: 0,
      human_confirmed_effect: 1,
      human_confirmed_no_effect: 1,
      human_resent: 0,
      open: 1,
      other: 0,
    });
    expect(unsafe.previous).toMatchObject({ calls: 0, unknownCount: 0, unknownShare: null });
    expect(unsafe.unknownShareChange).toBeNull();
  });

  it("slow_export: exact p50/p95/p99 (percentile_cont) and the timeout flag; sparkline slice 0", async () => {
    const slow = (await overview()).tools.find((t) => t.tool === "slow_export")!;
    expect(slow).toMatchObject({ calls: 20, unknownCount: 4, unknownShare: 0.2, timeoutMs: 100 });
    expect(slow.resolutions.open).toBe(4);
    expect(slow.latency.samples).toBe(20);
    // Durations 5, 10, …, 100: p50 at rank 9.5 → 52.5; p95 at 18.05 → 95.25; p99 at 18.81 → 99.05.
    expect(slow.latency.p50Ms).toBeCloseTo(52.5, 9);
    expect(slow.latency.p95Ms).toBeCloseTo(95.25, 9);
    expect(slow.latency.p99Ms).toBeCloseTo(99.05, 9);
    expect(slow.timeoutNearLatency).toBe(true); // 99.05 ≥ 0.8 × 100
    expect(slices(slow)).toEqual([[0, 20, 4]]);
    expect(slow.sparkline[0]).toMatchObject({ startEpochMs: seeded.from, endEpochMs: seeded.from + 60_000 });
    expect(slow.sparkline[19]!.endEpochMs).toBe(seeded.to);
  });

  it("a catalog tool without calls has a zero row; refund's timeout is far from its latency", async () => {
    const o = await overview();
    const never = o.tools.find((t) => t.tool === "never_called")!;
    expect(never).toMatchObject({
      calls: 0,
      unknownCount: 0,
      unknownShare: 0,
      timeoutMs: 250,
      timeoutNearLatency: false,
      latency: { samples: 0, p50Ms: null, p95Ms: null, p99Ms: null },
    });
    expect(never.sparkline).toHaveLength(BUCKETS);
  });

  it("totals add up over all tools", async () => {
    const { totals } = await overview();
    expect(totals.calls).toBe(17 + 4 + 20);
    expect(totals.unknownCount).toBe(6 + 3 + 4);
    expect(totals.unknownShare).toBeCloseTo(13 / 41, 12);
    expect(totals.resolutions).toEqual({
      found: 3,
      absent_resent: 2,
      human_confirmed_effect: 1,
      human_confirmed_no_effect: 1,
      human_resent: 0,
      open: 6,
      other: 0,
    });
    expect(totals.stalePendingCount).toBe(2);
    expect(totals.oldestStalePendingAgeMs).toBe(60_100);
    expect(totals.previous).toMatchObject({ calls: 4, unknownCount: 1, unknownShare: 0.25 });
    expect(totals.latency.samples).toBe(17 + 4 + 20);
    expect(slices(totals)).toEqual([
      [0, 20, 4],
      [16, 1, 0],
      [17, 1, 0],
      [18, 19, 9],
    ]);
  });

  it("stale PENDING counts whatever the window; a window of the past has no calls", async () => {
    const o = await statsOverview(store.prisma, {
      fromEpochMs: 1_000,
      toEpochMs: 2_000,
      staleNowEpochMs: seeded.staleNow,
    });
    expect(o.totals.calls).toBe(0);
    expect(o.tools.map((t) => [t.tool, t.calls, t.stalePendingCount])).toEqual([["issue_refund", 0, 2]]);
    expect(o.totals.sparkline).toHaveLength(20);
  });

  it("invalid input names the field", async () => {
    const bad = (input: Parameters<typeof statsOverview>[1]) => statsOverview(store.prisma, input);
    await expect(bad({ fromEpochMs: 10, toEpochMs: 10, staleNowEpochMs: 0 })).rejects.toMatchObject({
      name: "QueryInputError",
      field: "toEpochMs",
    });
    await expect(bad({ fromEpochMs: 1.5, toEpochMs: 10, staleNowEpochMs: 0 })).rejects.toBeInstanceOf(QueryInputError);
    await expect(bad({ fromEpochMs: 0, toEpochMs: 10, staleNowEpochMs: 0, buckets: 0 })).rejects.toMatchObject({
      field: "buckets",
    });
  });
});
