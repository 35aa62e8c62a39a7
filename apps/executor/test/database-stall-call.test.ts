/**
 * Issue 21 §1 end to end: a call whose claim waits on a stalled database answers by its deadline
 * minus the reserve, and the remote receives nothing after the deadline (also once the database
 * answers again and the claim lands). Needs the executor to bound its own waits (packages/core).
 */
import { DEFAULT_RESERVE_MS } from "@tristate/core";
import { describe, expect, it } from "vitest";
import { STALL_SLACK_MS, useStalledStack } from "./stalled-stack.ts";

const SLACK_MS = STALL_SLACK_MS;
const stack = useStalledStack();

describe("calls.execute with the database stalled after the key check", () => {
  it("a call whose claim stalls answers by the deadline minus the reserve; the remote gets nothing after the deadline", async () => {
    const budgetMs = 3000;
    // Stall the database right after the key was checked: the claim is what waits.
    const keys = stack().service.services.keys;
    const verify = keys.verify.bind(keys);
    keys.verify = async (secret) => {
      const info = await verify(secret);
      stack().proxy.stall();
      return info;
    };
    try {
      const arrivedEpochMs = Date.now();
      const started = performance.now();
      const res = await stack().execute({ stepId: "claim-stall", budgetMs });
      const tookMs = performance.now() - started;
      expect(tookMs).toBeLessThan(budgetMs - DEFAULT_RESERVE_MS + SLACK_MS);
      expect([200, 503]).toContain(res.status);
      if (res.status === 200) {
        const envelope = ((await res.json()) as { result: { data: { status: string } } }).result.data;
        expect(["FAILED_NO_EFFECT", "UNKNOWN"]).toContain(envelope.status);
      }
      // Past the deadline: what the remote has now is all it may ever get from this call.
      const deadlineEpochMs = arrivedEpochMs + budgetMs;
      await new Promise((r) => setTimeout(r, Math.max(0, deadlineEpochMs - Date.now() + 50)));
      const postsAtDeadline = stack().remote.posts;
      stack().proxy.resume();
      // The claim lands now; nothing may be sent for a turn that has ended.
      await new Promise((r) => setTimeout(r, 3000));
      expect(stack().remote.posts).toBe(postsAtDeadline);
      for (const effect of stack().remote.effects)
        expect(effect.committedAtEpochMs).toBeLessThanOrEqual(deadlineEpochMs);
    } finally {
      keys.verify = verify;
    }
  });
});
