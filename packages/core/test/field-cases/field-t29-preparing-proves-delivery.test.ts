/**
 * T29 — The probe shows a non-final state ("PREPARING"): that already proves delivery (CALL-E
 * phone-call agents). Source: https://github.com/CALLE-AI/awesome-phone-call-agents/issues/160.
 *
 * Remote (HTTP; the shared fake remote without key support; `POST /effects` stands for
 * `call.place`): creates the call record in state PREPARING at t=0.5 and answers only at t=20.
 * The key travels in the body as the call's reference; probe `GET /effects?clientRef=<key>` (for
 * `call.getByRef(ref)`). Tool `call.place` is `unsafe`.
 *
 * Scale: 1 case-second = 20 ms.
 * Difference by design: the executor's first probe runs at once (t=15), not at t=16.
 */

import { type FakeRemote, startFakeRemote } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canon } from "../../src/canon.ts";
import { createExecutor } from "../../src/executor.ts";
import { MemoryIntentStore } from "../../src/memory-intent-store.ts";
import { clientRefTool, eventsOf, scaledOptions, Timeline } from "./support.ts";

const S = 20;
let remote: FakeRemote;
let store: MemoryIntentStore;

beforeEach(async () => {
  remote = await startFakeRemote({ honorsKey: false });
  store = new MemoryIntentStore();
});
afterEach(async () => {
  await remote.close();
});

describe("field-t29-preparing-proves-delivery", () => {
  it("request timeout at 15 s; the probe sees the call PREPARING → SUCCEEDED, no resend", async () => {
    const tl = new Timeline(S);
    const tool = clientRefTool(remote.url, {
      name: "call.place",
      identity: { toRef: canon.upper, goalRef: canon.upper },
      timeoutMs: 15 * S, // request timeout 15 s
    });
    const executor = createExecutor({ store, tools: [tool], ...scaledOptions(S) });
    remote.fault({ commitDelayMs: 0.5 * S, state: "PREPARING", respondDelayMs: 19.5 * S });

    tl.start();
    const env = await executor.call({
      runId: "run-29",
      stepId: "call",
      tool: "call.place",
      args: { toRef: "CONTACT-0001", goalRef: "GOAL-01" },
      deadline: tl.deadline(60),
    });
    expect(tl.t()).toBeGreaterThanOrEqual(15);
    // settled by the probe (resolution found, state PREPARING), not by the late answer at t=20
    expect(env).toMatchObject({
      status: "SUCCEEDED",
      retry_safe: true,
      attempt: 1,
      resolution: "found",
      result: { state: "PREPARING" },
    });
    const outcome = (await eventsOf(store, env.idempotency_key, "outcome"))[0];
    expect(outcome?.data).toMatchObject({ outcome: "UNKNOWN", code: "READ_TIMEOUT" });
    expect(remote.posts).toBe(1);
    expect(remote.effects).toHaveLength(1);
  });
});
