import { FakeClock } from "@tristate/testing";
import { describe, expect, it, vi } from "vitest";
import { canon } from "./canon.ts";
import { Deadline } from "./deadline.ts";
import { AmbiguousError } from "./errors.ts";
import { createExecutor } from "./executor.ts";
import type { StoredIntentEvent } from "./intent-store.ts";
import { MemoryIntentStore } from "./memory-intent-store.ts";
import { probeProgress } from "./probe-progress.ts";
import { sweepStale } from "./sweeper.ts";
import { defineTool } from "./tool.ts";

let id = 0;
const ev = (type: StoredIntentEvent["type"], data: Record<string, unknown> = {}, at = 0): StoredIntentEvent => ({
  id: ++id,
  key: "k",
  type,
  atEpochMs: at,
  data: data as StoredIntentEvent["data"],
});
const absent = (probe: string, round: number, at = 0) => ev("probe", { probe, round, answer: "absent" }, at);

describe("probeProgress: the rounds on record for the current attempt (issue 12)", () => {
  it("counts the trailing clean rounds after the attempt's outcome, numbering on", () => {
    const events = [ev("created"), ev("sent"), ev("outcome"), absent("key", 1, 10), absent("key", 2, 20)];
    expect(probeProgress(events, ["key"])).toStrictEqual({ clean: 2, nextRound: 3, lastRoundAtEpochMs: 20 });
  });

  it("a round counts only when every counting probe said absent, and nothing else", () => {
    const both = [ev("outcome"), absent("key", 1), absent("identity", 1), absent("key", 2)];
    expect(probeProgress(both, ["key", "identity"]).clean).toBe(0); // round 2 lacks identity: the run ends there
    const failed = [ev("outcome"), absent("key", 1), ev("probe", { probe: "key", round: 2, answer: "failed" })];
    expect(probeProgress(failed, ["key"])).toMatchObject({ clean: 0, nextRound: 3 });
    const match = [ev("outcome"), absent("identity", 1), ev("probe", { probe: "identity", round: 1, match: "other" })];
    expect(probeProgress(match, ["identity"]).clean).toBe(0);
  });

  it("rounds before the attempt's last send do not count", () => {
    const events = [ev("outcome"), absent("key", 1), absent("key", 2), ev("resend"), ev("sent"), ev("outcome")];
    expect(probeProgress(events, ["key"])).toStrictEqual({ clean: 0, nextRound: 1, lastRoundAtEpochMs: null });
  });

  it("an operator's resend starts a new attempt: the rounds before it do not count", () => {
    const resent = ev("human_action", { action: "resend", fromStatus: "UNKNOWN", toStatus: "PENDING", attempt: 2 });
    const events = [ev("outcome"), absent("key", 1), absent("key", 2), resent, ev("lease_expired")];
    expect(probeProgress(events, ["key"])).toStrictEqual({ clean: 0, nextRound: 1, lastRoundAtEpochMs: null });
    // Any other operator action (a note, a confirmation refused) is no new attempt.
    const noted = ev("human_action", { action: "confirm_effect", fromStatus: "UNKNOWN" });
    expect(probeProgress([ev("outcome"), absent("key", 1), noted], ["key"]).clean).toBe(1);
  });
});

describe("a reconciliation interrupted by a crash continues where it stopped", () => {
  function setup(kind: "idempotent_by_key" | "unsafe") {
    const clock = new FakeClock();
    const store = new MemoryIntentStore({ clock });
    let sends = 0;
    let probes = 0;
    const state = { probeFails: true };
    const tool = defineTool({
      name: "refund",
      kind,
      identity: { order: canon.upper },
      timeoutMs: 1000,
      ...(kind === "unsafe" ? { settleMs: 1000, resendWhenAbsent: true } : {}),
      invoke: async () => {
        if (++sends === 1) throw new AmbiguousError("read timeout", { code: "READ_TIMEOUT" });
        return { ok: true };
      },
      probe: async () => {
        probes++;
        if (state.probeFails) throw new Error("probe service down");
        return null;
      },
    });
    // One probe round per pass of the call itself, so the record stays UNKNOWN for the test.
    const first = createExecutor({ store, tools: [tool], clock, probe: { attempts: 1, spacingMs: 1000 } });
    const executor = createExecutor({ store, tools: [tool], clock, probe: { attempts: 3, spacingMs: 1000 } });
    return { clock, store, first, executor, state, sends: () => sends, probes: () => probes };
  }

  it("keyed tool: two absent rounds on record from a crashed pass → the next pass runs one round, then resends once", async () => {
    const t = setup("idempotent_by_key");
    const env = await t.first.call({
      runId: "r",
      stepId: "s",
      tool: "refund",
      args: { order: "a-1" },
      deadline: Deadline.after(10_000, t.clock),
    });
    expect(env.status).toBe("UNKNOWN"); // its one probe round failed: no evidence
    const key = env.idempotency_key;
    t.state.probeFails = false;
    // A sweeper's pass wrote rounds 2 and 3 (absent) and then its process was killed.
    const now = t.clock.nowEpochMs();
    await t.store.appendEvents([
      { key, type: "probe", atEpochMs: now, data: { probe: "key", round: 2, answer: "absent" } },
      { key, type: "probe", atEpochMs: now + 1000, data: { probe: "key", round: 3, answer: "absent" } },
    ]);
    const probesBefore = t.probes();
    const done = await t.executor.reconcileKey(key, Deadline.after(20_000, t.clock), "sweeper");
    expect(done).toMatchObject({ status: "SUCCEEDED", resolution: "absent_resent" });
    expect(t.probes() - probesBefore).toBe(1);
    expect(t.sends()).toBe(2);
    const rounds = (await t.store.listEvents(key)).filter((e) => e.type === "probe").map((e) => e.data.round);
    expect(rounds).toStrictEqual([1, 2, 3, 4]);
  });

  it("unsafe tool whose absence must be proof: the rounds on record do not count; all rounds run again", async () => {
    const t = setup("unsafe");
    const env = await t.first.call({
      runId: "r",
      stepId: "s",
      tool: "refund",
      args: { order: "a-1" },
      deadline: Deadline.after(10_000, t.clock),
    });
    const key = env.idempotency_key;
    t.state.probeFails = false;
    await t.store.appendEvents([
      { key, type: "probe", atEpochMs: t.clock.nowEpochMs(), data: { probe: "key", round: 2, answer: "absent" } },
    ]);
    t.clock.advance(5000);
    const probesBefore = t.probes();
    await t.executor.reconcileKey(key, Deadline.after(20_000, t.clock), "sweeper");
    expect(t.probes() - probesBefore).toBe(3);
  });
});

describe("the sweeper reads a timeline only where rounds of the current attempt can be on record", () => {
  it("taken from PENDING (a resend's process died): no timeline read, every round runs; taken from UNKNOWN: read", async () => {
    const clock = new FakeClock();
    const store = new MemoryIntentStore({ clock });
    let probeFails = true;
    let sends = 0;
    const tool = defineTool({
      name: "refund",
      kind: "idempotent_by_key",
      identity: { order: canon.upper },
      timeoutMs: 1000,
      invoke: async () => {
        if (++sends <= 2) throw new AmbiguousError("read timeout", { code: "READ_TIMEOUT" });
        return { ok: true };
      },
      probe: async () => {
        if (probeFails) throw new Error("probe service down");
        return null;
      },
    });
    const first = createExecutor({ store, tools: [tool], clock, probe: { attempts: 1, spacingMs: 1000 } });
    const executor = createExecutor({ store, tools: [tool], clock, probe: { attempts: 3, spacingMs: 1000 } });
    const call = (stepId: string) =>
      first.call({
        runId: "r",
        stepId,
        tool: "refund",
        args: { order: stepId },
        deadline: Deadline.after(10_000, clock),
      });
    const resent = (await call("a")).idempotency_key;
    const unknown = (await call("b")).idempotency_key;
    // Both are UNKNOWN with a failed round 1 on record. "a" is then resent, and that process dies.
    const a = (await store.get(resent))!;
    await store.update(
      resent,
      a.version,
      {
        status: "PENDING",
        attempt: 2,
        leaseUntilEpochMs: clock.nowEpochMs() + 1,
        recheckAtEpochMs: clock.nowEpochMs() + 1,
      },
      [{ key: resent, type: "resend", atEpochMs: clock.nowEpochMs(), data: { attempt: 2 } }],
      clock.nowEpochMs(),
    );
    probeFails = false;
    clock.advance(60_000);
    const reads = vi.spyOn(store, "listEvents");
    const report = await sweepStale({ store, executor, limit: 10, budgetMs: 30_000 });
    expect(report.taken).toBe(2);
    expect(reads.mock.calls.map(([key]) => key)).toStrictEqual([unknown]);
    const rounds = async (key: string) =>
      (await store.listEvents(key)).filter((e) => e.type === "probe").map((e) => e.data.round);
    // "a": three fresh rounds (none of its attempt was on record), then the same-key resend.
    expect(await rounds(resent)).toStrictEqual([1, 1, 2, 3]);
    expect(await store.get(resent)).toMatchObject({ status: "SUCCEEDED", attempt: 3 });
  });
});
