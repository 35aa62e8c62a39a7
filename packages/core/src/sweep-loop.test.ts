import { afterEach, describe, expect, it, vi } from "vitest";
import { startSweepLoop } from "./sweep-loop.ts";
import type { SweepReport } from "./sweeper.ts";

const report = (taken: number): SweepReport => ({ taken, results: [], left: [] });

describe("startSweepLoop: adaptive rounds over the tenants", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("runs rounds back to back while they take records, then backs off doubling up to idleMs", async () => {
    vi.useFakeTimers();
    let backlog = 3; // rounds that find work
    const passes: { tenant: string; at: number }[] = [];
    const loop = startSweepLoop({
      tenants: async () => ["a", "b"],
      idleMs: 400,
      minIdleMs: 50,
      pass: async (tenant) => {
        passes.push({ tenant, at: Date.now() });
        return report(tenant === "a" && backlog-- > 0 ? 10 : 0);
      },
    });
    const t0 = Date.now();
    // First round after minIdleMs; three busy rounds and the first empty one follow at once; then 50, 100, 200, 400, 400.
    await vi.advanceTimersByTimeAsync(1210); // (a zero delay is 1 ms under fake timers)
    expect(passes.filter((p) => p.tenant === "a").map((p) => p.at - t0)).toEqual([
      50, 51, 52, 53, 103, 203, 403, 803, 1203,
    ]);
    expect(passes.map((p) => p.tenant).slice(0, 4)).toEqual(["a", "b", "a", "b"]);
    await loop.stop();
  });

  it("a failing pass or tenant list is reported and the loop goes on; stop() waits for the pass in progress", async () => {
    const errors: (string | null)[] = [];
    let calls = 0;
    let finished = false;
    const loop = startSweepLoop({
      tenants: async () => {
        calls++;
        if (calls === 1) throw new Error("no tenants");
        return ["x"];
      },
      idleMs: 20,
      minIdleMs: 1,
      pass: async () => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        if (calls === 2) throw new Error("pass failed");
        finished = true;
        return report(0);
      },
      onError: (_e, tenant) => errors.push(tenant),
    });
    await vi.waitFor(() => expect(finished).toBe(true));
    await loop.stop();
    expect(errors).toEqual([null, "x"]);
  });

  it("lanes: a backlog is drained by two rounds at once; an idle loop polls with one lane", async () => {
    vi.useFakeTimers();
    let backlog = 40; // records left; a pass takes up to 5 and takes 5 ms
    let inFlight = 0;
    let most = 0;
    let idlePasses = 0;
    const loop = startSweepLoop({
      tenants: async () => ["a"],
      idleMs: 40,
      minIdleMs: 40,
      lanes: 2,
      pass: async () => {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 5));
        inFlight--;
        const taken = Math.min(5, backlog);
        backlog -= taken;
        if (taken === 0) idlePasses++;
        return report(taken);
      },
    });
    await vi.advanceTimersByTimeAsync(100);
    expect(backlog).toBe(0);
    expect(most).toBe(2);
    // Idle now: the extra lane ended at its first empty round; one lane polls every 40 ms (+5 ms pass).
    const before = idlePasses;
    await vi.advanceTimersByTimeAsync(450);
    expect(idlePasses - before).toBe(10); // two lanes would poll 20 times
    await loop.stop();
    expect(inFlight).toBe(0);
    expect(() => startSweepLoop({ tenants: async () => [], pass: async () => report(0), lanes: 0 })).toThrow(/lanes/);
  });

  it("a hook that throws (a broken logger) does not end the loop, nor leave a rejection unhandled", async () => {
    vi.useFakeTimers();
    let passes = 0;
    const loop = startSweepLoop({
      tenants: async () => ["a"],
      idleMs: 40,
      minIdleMs: 40,
      lanes: 2,
      pass: async () => {
        passes++;
        if (passes % 2 === 0) throw new Error("pass failed");
        return report(passes < 6 ? 1 : 0);
      },
      onReport: () => {
        throw new Error("logger broke");
      },
      onError: () => {
        throw new Error("logger broke again");
      },
    });
    await vi.advanceTimersByTimeAsync(1000);
    expect(passes).toBeGreaterThan(15); // still polling every 40 ms
    await expect(loop.stop()).resolves.toBeUndefined();
  });

  it("lanes: the second lane starts as soon as the first pass has taken records, not when it ends", async () => {
    vi.useFakeTimers();
    let backlog = 20;
    let inFlight = 0;
    let most = 0;
    const loop = startSweepLoop({
      tenants: async () => ["a"],
      idleMs: 1000,
      minIdleMs: 10,
      lanes: 2,
      pass: async (_tenant, claimed) => {
        const taken = Math.min(10, backlog);
        backlog -= taken;
        claimed(taken);
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 100)); // slow probes
        inFlight--;
        return report(taken);
      },
    });
    await vi.advanceTimersByTimeAsync(60); // the first pass (from 10 ms) is still reconciling
    expect(inFlight).toBe(2);
    expect(backlog).toBe(0);
    await vi.advanceTimersByTimeAsync(500);
    expect(most).toBe(2);
    const stopped = loop.stop();
    await vi.advanceTimersByTimeAsync(200); // the pass in progress ends
    await stopped;
  });
});
