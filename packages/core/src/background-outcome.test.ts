import { FakeClock } from "@tristate/testing";
import { describe, expect, it } from "vitest";
import { canon } from "./canon.ts";
import { Deadline } from "./deadline.ts";
import { RejectedError } from "./errors.ts";
import { createExecutor } from "./executor.ts";
import type { IntentPatch } from "./intent-store.ts";
import { MemoryIntentStore } from "./memory-intent-store.ts";
import { sweepStale } from "./sweeper.ts";
import { defineTool } from "./tool.ts";

/** A store whose outcome writes can be held back or lost, to see what the agent is told meanwhile. */
class SlowStore extends MemoryIntentStore {
  hold: Promise<void> | null = null;
  /** Outcome writes to lose (throw) from now on; `Infinity`: all of them. */
  lose = 0;
  /** `durable` of each outcome write, by status. */
  readonly durability: [string | undefined, boolean][] = [];
  override async update(...args: Parameters<MemoryIntentStore["update"]>) {
    const patch: IntentPatch = args[2];
    this.durability.push([patch.status, args[5]?.durable !== false]);
    if (patch.status === "SUCCEEDED" || patch.status === "FAILED_NO_EFFECT") {
      if (this.hold) await this.hold;
      if (this.lose > 0) {
        this.lose--;
        throw new Error("the database went away");
      }
    }
    return super.update(...args);
  }
}

function setup(outcome: "ok" | "rejected" = "ok") {
  const clock = new FakeClock();
  const store = new SlowStore();
  let sends = 0;
  const effects = new Set<string>();
  const tool = defineTool({
    name: "charge",
    kind: "idempotent_by_key",
    identity: { order: canon.upper },
    timeoutMs: 5000,
    invoke: async (_args, ctx) => {
      sends++;
      if (outcome === "rejected") throw new RejectedError("declined", { httpStatus: 422 });
      effects.add(ctx.idempotencyKey);
      return { id: ctx.idempotencyKey };
    },
    probe: async (_args, ctx) => (effects.has(ctx.clientRef) ? { id: ctx.clientRef } : null),
  });
  const lostWrites: string[] = [];
  const executor = createExecutor({
    store,
    tools: [tool],
    clock,
    backgroundOutcomes: true,
    onBackgroundWriteError: (_error, key) => lostWrites.push(key),
  });
  const call = () =>
    executor.call({
      runId: "r",
      stepId: "s",
      tool: "charge",
      args: { order: "o-1" },
      deadline: Deadline.after(30_000, clock),
    });
  return { clock, store, executor, call, sends: () => sends, lostWrites };
}

describe("backgroundOutcomes: SUCCEEDED answered before its non-durable write lands", () => {
  it("answers SUCCEEDED while the write is held; a repeat call in this process waits for it and replays", async () => {
    const t = setup();
    let release!: () => void;
    t.store.hold = new Promise((resolve) => {
      release = resolve;
    });
    const first = await t.call();
    expect(first).toMatchObject({ status: "SUCCEEDED", replayed: false });
    expect((await t.store.get(first.idempotency_key))?.status).toBe("PENDING"); // not yet written
    const repeat = t.call();
    release();
    expect(await repeat).toMatchObject({ status: "SUCCEEDED", replayed: true });
    expect(t.sends()).toBe(1);
    expect((await t.store.get(first.idempotency_key))?.status).toBe("SUCCEEDED");
  });

  it("outcomesWritten and the entry points that read records (abortRun) wait for a held write: the step is seen SUCCEEDED", async () => {
    const t = setup();
    let release!: () => void;
    t.store.hold = new Promise((resolve) => {
      release = resolve;
    });
    const first = await t.call();
    expect(first.status).toBe("SUCCEEDED");
    let written = false;
    const settled = t.executor.outcomesWritten().then(() => {
      written = true;
    });
    let aborted = false;
    const abort = t.executor.abortRun("r", Deadline.after(30_000, t.clock)).then((report) => {
      aborted = true;
      return report;
    });
    for (let i = 0; i < 20; i++) await Promise.resolve();
    expect([written, aborted]).toEqual([false, false]);
    expect((await t.store.get(first.idempotency_key))?.status).toBe("PENDING");
    release();
    await settled;
    const report = await abort;
    // Read after the write landed: the effect the agent was told of, not a call still in flight.
    expect(report.steps).toEqual([expect.objectContaining({ key: first.idempotency_key, status: "SUCCEEDED" })]);
    expect(t.sends()).toBe(1);
  });

  it("a write that fails once (a dropped connection) is tried again and lands: SUCCEEDED in the log, nothing reported", async () => {
    const t = setup();
    t.store.lose = 1;
    const first = await t.call();
    expect(first.status).toBe("SUCCEEDED");
    await t.executor.outcomesWritten();
    expect(await t.store.get(first.idempotency_key)).toMatchObject({ status: "SUCCEEDED", resolution: null });
    expect(t.lostWrites).toEqual([]);
    expect(t.sends()).toBe(1);
  });

  it("a write lost for good is reported and leaves PENDING; after the lease the sweeper's probe finds the effect: SUCCEEDED found, never resent", async () => {
    const t = setup();
    t.store.lose = Number.POSITIVE_INFINITY;
    const first = await t.call();
    expect(first.status).toBe("SUCCEEDED");
    await t.executor.outcomesWritten(); // every retry failed
    t.store.lose = 0;
    expect(t.lostWrites).toEqual([first.idempotency_key]);
    expect((await t.store.get(first.idempotency_key))?.status).toBe("PENDING");
    t.clock.advance(31_000);
    const swept = await sweepStale({ store: t.store, executor: t.executor });
    expect(swept.taken).toBe(1);
    expect(await t.store.get(first.idempotency_key)).toMatchObject({ status: "SUCCEEDED", resolution: "found" });
    expect(t.sends()).toBe(1);
  });

  it("FAILED_NO_EFFECT is still awaited, and durable: a lost write fails the call instead of answering retry-safe", async () => {
    const t = setup("rejected");
    t.store.lose = 1;
    await expect(t.call()).rejects.toThrow("the database went away");
    const answered = await setup("rejected").call();
    expect(answered).toMatchObject({ status: "FAILED_NO_EFFECT", retry_safe: true });
    expect(t.store.durability).toEqual([["FAILED_NO_EFFECT", true]]);
  });

  it("a write that fails after the record's lease has passed is still tried again and lands (rule 10): SUCCEEDED in the log", async () => {
    const t = setup();
    t.store.lose = 1;
    const slow = defineTool({
      name: "slow_charge",
      kind: "idempotent_by_key",
      identity: { order: canon.upper },
      timeoutMs: 5000,
      invoke: async () => {
        t.clock.advance(40_000); // the answer comes after the call's 30 s deadline (its lease)
        return { ok: true };
      },
      probe: async () => null,
    });
    const lost: string[] = [];
    const executor = createExecutor({
      store: t.store,
      tools: [slow],
      clock: t.clock,
      backgroundOutcomes: true,
      onBackgroundWriteError: (_e, key) => lost.push(key),
    });
    const env = await executor.call({
      runId: "late",
      stepId: "s",
      tool: "slow_charge",
      args: { order: "o-2" },
      deadline: Deadline.after(30_000, t.clock),
    });
    expect(env.status).toBe("SUCCEEDED");
    await executor.outcomesWritten();
    expect(lost).toEqual([]);
    expect(await t.store.get(env.idempotency_key)).toMatchObject({ status: "SUCCEEDED" });
  });
});

describe("only where the remote deduplicates a resend is a SUCCEEDED written in the background", () => {
  // A lost write would leave PENDING; with a lookup that lags, the sweeper's probes find nothing, and
  // without a deduplicated resend the record goes to a person (or, past a too short settle window,
  // is resent): the agent was told SUCCEEDED. So these are written durably, before the answer.
  const cases = [
    ["unsafe, key probe, no settle window", { kind: "unsafe" as const }],
    ["unsafe, key probe, settle window", { kind: "unsafe" as const, settleMs: 1000, resendWhenAbsent: true }],
    [
      "idempotent_by_key that may not be resent on absence",
      { kind: "idempotent_by_key" as const, resendWhenAbsent: false },
    ],
    // A lost write would reach the sweeper after the key is forgotten: KEY_RETENTION_EXPIRED, a person.
    [
      "idempotent_by_key whose key retention ends within an hour of the lease",
      { kind: "idempotent_by_key" as const, keyRetentionMs: 20_000 },
    ],
  ] as const;
  for (const [name, spec] of cases) {
    it(`${name}: awaited and durable`, async () => {
      const clock = new FakeClock();
      const store = new SlowStore();
      let release!: () => void;
      store.hold = new Promise((resolve) => {
        release = resolve;
      });
      const tool = defineTool({
        name: "pay",
        identity: { order: canon.upper },
        timeoutMs: 5000,
        ...spec,
        invoke: async () => ({ ok: true }),
        probe: async () => null, // the remote's lookup lags: it does not show the effect yet
      });
      const executor = createExecutor({ store, tools: [tool], clock, backgroundOutcomes: true });
      let answered = false;
      const call = executor
        .call({ runId: "r", stepId: "s", tool: "pay", args: { order: "o-1" }, deadline: Deadline.after(30_000, clock) })
        .then((env) => {
          answered = true;
          return env;
        });
      for (let i = 0; i < 20; i++) await Promise.resolve();
      expect(answered).toBe(false); // not told SUCCEEDED before the log says so
      release();
      expect(await call).toMatchObject({ status: "SUCCEEDED" });
      expect(store.durability).toEqual([["SUCCEEDED", true]]);
    });
  }

  it("a keyed tool resent on absence (the remote dedupes): answered at once, written non-durably in the background", async () => {
    const t = setup();
    let release!: () => void;
    t.store.hold = new Promise((resolve) => {
      release = resolve;
    });
    expect((await t.call()).status).toBe("SUCCEEDED");
    release();
    await t.executor.outcomesWritten();
    expect(t.store.durability).toEqual([["SUCCEEDED", false]]);
  });
});
