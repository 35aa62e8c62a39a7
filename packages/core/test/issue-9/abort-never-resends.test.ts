/**
 * An abort reconciles a run's UNKNOWN steps before compensating (rule 6), but never resends one: an
 * aborted run must not gain the effect it is undoing. A step whose probes say absent waits for a
 * person (`RUN_ABORTED`); nothing reaches the remote again, and the abort reports it not confirmed.
 */

import { type FakeRemote, refundTool, startFakeRemote } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Deadline } from "../../src/deadline.ts";
import { createExecutor } from "../../src/executor.ts";
import { MemoryIntentStore } from "../../src/memory-intent-store.ts";

let remote: FakeRemote;
let store: MemoryIntentStore;

beforeEach(async () => {
  remote = await startFakeRemote({ honorsKey: true });
  store = new MemoryIntentStore();
});
afterEach(async () => {
  await remote.close();
});

describe("abortRun never resends an UNKNOWN step", () => {
  for (const probes of ["with probes that say absent", "keyed, without a probe"] as const) {
    it(`${probes}: no second request, the step waits for a person (RUN_ABORTED), reported not confirmed`, async () => {
      const tool = refundTool(
        remote,
        probes === "keyed, without a probe" ? { probe: undefined, probeByIdentity: undefined } : {},
      );
      const executor = createExecutor({
        store,
        tools: [tool],
        probe: { attempts: 2, spacingMs: 10, timeoutMs: 500 },
      });
      // Nothing committed, the answer lost; the call's own reconciliation resends once, lost again.
      remote.fault({ commit: false, answer: "reset" }, { commit: false, answer: "reset" });
      const env = await executor.call({
        runId: "run-a",
        stepId: "refund",
        tool: "issue_refund",
        args: { order_id: "A-9", amount: "5.00" },
        deadline: Deadline.after(10_000),
      });
      expect(env).toMatchObject({ status: "UNKNOWN", retry_safe: false, attempt: 2 });
      const postsBefore = remote.posts;
      expect(postsBefore).toBe(2);
      const report = await executor.abortRun("run-a", Deadline.after(5_000));
      expect(remote.posts).toBe(postsBefore);
      expect(remote.effects).toHaveLength(0);
      expect(report.steps).toMatchObject([{ stepId: "refund", outcome: "not_confirmed" }]);
      expect(report.complete).toBe(false);
      expect(await store.get(env.idempotency_key)).toMatchObject({
        status: "UNKNOWN",
        needsHuman: true,
        error: { code: "RUN_ABORTED" },
      });
    });
  }
});
