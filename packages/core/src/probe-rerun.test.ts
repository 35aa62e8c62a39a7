import { describe, expect, it } from "vitest";
import { canon } from "./canon.ts";
import { Deadline } from "./deadline.ts";
import { AmbiguousError } from "./errors.ts";
import { createExecutor } from "./executor.ts";
import { MemoryIntentStore } from "./memory-intent-store.ts";
import { foundStateUnknown, refusedUnderKey } from "./probe-answer.ts";
import { defineTool } from "./tool.ts";

// Issue 21 §5 (rule 5a), in process: a defineTool probe that finds the request's item but cannot
// tell whether it took effect never settles SUCCEEDED; probe.rerun shows it as `unclear` and says
// what the operator must check, and a refusal read back under the key as what it is.

function setup() {
  const store = new MemoryIntentStore();
  let answer: unknown = foundStateUnknown(
    { id: "ch_1", status: "requires_action" },
    "status requires_action is unknown",
  );
  let sends = 0;
  const tool = defineTool({
    name: "charge",
    kind: "unsafe",
    identity: { order: canon.upper },
    timeoutMs: 5000,
    invoke: async () => {
      sends++;
      throw new AmbiguousError("read timeout", { code: "READ_TIMEOUT" });
    },
    probe: async () => answer,
  });
  const executor = createExecutor({ store, tools: [tool], probe: { attempts: 1, spacingMs: 0, timeoutMs: 1000 } });
  return {
    executor,
    sends: () => sends,
    answer: (a: unknown) => {
      answer = a;
    },
  };
}

describe("a find whose state tells nothing (foundStateUnknown)", () => {
  it("→ UNKNOWN for a person (FOUND_STATE_UNKNOWN), never SUCCEEDED; probe.rerun shows 'unclear' and the refusal as such", async () => {
    const t = setup();
    const env = await t.executor.call({
      runId: "r",
      stepId: "s",
      tool: "charge",
      args: { order: "o-1" },
      deadline: Deadline.after(10_000),
    });
    expect(env).toMatchObject({ status: "UNKNOWN", retry_safe: false, error: { code: "FOUND_STATE_UNKNOWN" } });
    expect(env.error?.message).toContain("status requires_action is unknown");
    expect(t.sends()).toBe(1);

    const unclear = await t.executor.rerunProbes(env.idempotency_key);
    expect(unclear.probes[0]).toMatchObject({
      answer: "unclear",
      found: { id: "ch_1", status: "requires_action" },
      message: "status requires_action is unknown",
    });
    expect(unclear.summary).toMatch(/does not show whether the effect happened/);

    t.answer(refusedUnderKey("card declined", 402, { id: "ch_1", status: "failed" }));
    const refused = await t.executor.rerunProbes(env.idempotency_key);
    expect(refused.probes[0]).toMatchObject({ answer: "absent", message: "refused: card declined" });
    expect(refused.summary).toMatch(/shows it was refused \(no effect\): confirm_no_effect/);
  });
});
