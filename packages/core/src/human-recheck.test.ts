import { FakeClock } from "@tristate/testing";
import { describe, expect, it } from "vitest";
import { canon } from "./canon.ts";
import { Deadline } from "./deadline.ts";
import { AmbiguousError } from "./errors.ts";
import { createExecutor } from "./executor.ts";
import { MemoryIntentStore } from "./memory-intent-store.ts";
import { sweepStale } from "./sweeper.ts";
import { defineTool } from "./tool.ts";

/** An unsafe remote whose effect lands late (field case T06): the call times out, probes see nothing yet. */
function setup(withProbe: boolean) {
  const clock = new FakeClock();
  const store = new MemoryIntentStore();
  let landed: { id: string } | null = null;
  let sends = 0;
  const tool = defineTool({
    name: "fn.invoke",
    kind: "unsafe",
    identity: { jobId: canon.upper },
    timeoutMs: 5000,
    invoke: async () => {
      sends++;
      throw new AmbiguousError("read timeout", { code: "READ_TIMEOUT" });
    },
    ...(withProbe ? { probe: async () => landed } : {}),
  });
  const executor = createExecutor({ store, tools: [tool], clock, humanRecheckMs: 60_000 });
  return {
    clock,
    store,
    executor,
    land: () => {
      landed = { id: "row-1" };
    },
    sends: () => sends,
  };
}

describe("the sweeper re-checks the human queue where a probe can still find the effect", () => {
  it("absent probes → human queue; the effect lands later; the re-check finds it: SUCCEEDED found, never resent", async () => {
    const t = setup(true);
    const first = await t.executor.call({
      runId: "r",
      stepId: "s",
      tool: "fn.invoke",
      args: { jobId: "J-1" },
      deadline: Deadline.after(30_000, t.clock),
    });
    expect(first).toMatchObject({
      status: "UNKNOWN",
      resolution: "needs_human",
      error: { code: "PROBES_ABSENT_NO_DEDUPE" },
    });
    const queued = await t.store.get(first.idempotency_key);
    expect(queued?.recheckAtEpochMs).toBe(t.clock.nowEpochMs() + 60_000); // its re-check time

    expect((await sweepStale({ store: t.store, executor: t.executor })).taken).toBe(0); // not due yet
    t.clock.advance(61_000);
    const nothingYet = await sweepStale({ store: t.store, executor: t.executor });
    expect(nothingYet.taken).toBe(1);
    expect(nothingYet.results[0]?.envelope).toMatchObject({ status: "UNKNOWN", resolution: "needs_human" });
    const again = await t.store.get(first.idempotency_key);
    expect(again?.recheckAtEpochMs).toBe(t.clock.nowEpochMs() + 120_000); // the delay doubles
    const needsHumanEvents = (await t.store.listEvents(first.idempotency_key)).filter((e) => e.type === "needs_human");
    expect(needsHumanEvents).toHaveLength(1); // a re-check that learnt nothing adds no second notice

    t.land();
    t.clock.advance(121_000);
    const found = await sweepStale({ store: t.store, executor: t.executor });
    expect(found.results[0]?.envelope).toMatchObject({
      status: "SUCCEEDED",
      resolution: "found",
      result: { id: "row-1" },
    });
    expect((await t.store.get(first.idempotency_key))?.needsHuman).toBe(false);
    expect(t.sends()).toBe(1);
  });

  it("a tool without any probe is never re-checked: it waits for a person", async () => {
    const t = setup(false);
    const first = await t.executor.call({
      runId: "r",
      stepId: "s",
      tool: "fn.invoke",
      args: { jobId: "J-1" },
      deadline: Deadline.after(30_000, t.clock),
    });
    expect(first).toMatchObject({ status: "UNKNOWN", error: { code: "NO_PROBE" } });
    t.clock.advance(365 * 24 * 3600_000);
    expect((await sweepStale({ store: t.store, executor: t.executor })).taken).toBe(0);
    expect(t.sends()).toBe(1);
  });
});
