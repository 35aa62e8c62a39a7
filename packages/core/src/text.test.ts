import { type FakeRemote, refundTool, startFakeRemote } from "@tristate/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Deadline } from "./deadline.ts";
import { createExecutor } from "./executor.ts";
import { MemoryIntentStore } from "./memory-intent-store.ts";
import { findBadText, LONE_SURROGATE_RULE_TEXT, NUL_RULE_TEXT, textRuleBroken } from "./text.ts";

describe("the text rule (no NUL, no lone surrogate)", () => {
  it("refuses NUL and unpaired surrogates; accepts pairs, other control characters and any script", () => {
    expect(textRuleBroken("a\u0000b")).toBe(NUL_RULE_TEXT);
    for (const s of ["\ud800", "a\ud800b", "\udc00", "a\udc00", "\ud83d\ud83d\ude80", "\ude80\ud83d"]) {
      expect(textRuleBroken(s), JSON.stringify(s)).toBe(LONE_SURROGATE_RULE_TEXT);
    }
    for (const s of ["", "🚀", "a🚀b", "\t\u0001\u007f\ufffd", "Größe 大 مرحبا", "\ud83d\ude80\ud83d\ude80"]) {
      expect(textRuleBroken(s), JSON.stringify(s)).toBeNull();
    }
  });

  it("findBadText walks values and property names deep, in document order, and names the path", () => {
    expect(findBadText({ a: "ok", b: [1, true, null, { c: "x\u0000" }], d: "\ud800" })).toEqual({
      path: ["b", 3, "c"],
      rule: NUL_RULE_TEXT,
    });
    expect(findBadText({ a: { "k\udc00": 1 } })).toEqual({
      path: ["a"],
      rule: `property names ${LONE_SURROGATE_RULE_TEXT}`,
    });
    expect(findBadText("\u0000")).toEqual({ path: [], rule: NUL_RULE_TEXT });
    expect(findBadText({ a: ["🚀", { b: 1.5 }], c: undefined })).toBeNull();
  });

  it("findBadText is iterative: a value nested 200 000 deep neither overflows nor crawls", () => {
    let deep: unknown = "x\u0000";
    for (let i = 0; i < 200_000; i++) deep = [deep];
    const started = performance.now();
    const bad = findBadText(deep);
    expect(bad?.path).toHaveLength(200_000);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});

describe("the executor refuses such arguments before anything is written or sent", () => {
  let remote: FakeRemote;
  beforeAll(async () => {
    remote = await startFakeRemote();
  });
  afterAll(async () => {
    await remote.close();
  });

  it("INVALID_ARGUMENTS naming the field (relative to args), nothing stored, nothing sent", async () => {
    const store = new MemoryIntentStore();
    const ex = createExecutor({ store, tools: [refundTool(remote)] });
    const call = (args: Record<string, unknown>) =>
      ex.call({
        runId: "run-1",
        stepId: "step-1",
        tool: "issue_refund",
        args: { order_id: "A-1", amount: "1.00", currency: "EUR", ...args },
        deadline: Deadline.after(10_000),
      });
    for (const [args, field, rule] of [
      [{ reason: "a\ud800" }, "reason", LONE_SURROGATE_RULE_TEXT],
      [{ reason: "a\u0000" }, "reason", NUL_RULE_TEXT],
      [{ order_id: "\udc00A-1" }, "order_id", LONE_SURROGATE_RULE_TEXT],
    ] as const) {
      const env = await call(args);
      expect(env).toMatchObject({
        status: "FAILED_NO_EFFECT",
        retry_safe: true,
        error: { code: "INVALID_ARGUMENTS", field, rule },
      });
    }
    expect(await store.listByRun("run-1")).toEqual([]);
    expect(remote.posts).toBe(0);
  });
});
