/**
 * T05 — POST replayed on 5xx and timeouts, so one job ran six times (PanoramicData OData client).
 * Source: https://github.com/panoramicdata/PanoramicData.OData.Client/pull/44 (fixes #43).
 *
 * Remote (the shared fake remote without key support; `POST /effects` stands for
 * `POST /investigations`): starts a job at t=0.1. The key travels in the body field `clientRef`;
 * the probe `GET /effects?clientRef=<key>` returns the job in any state.
 * Tool `investigation.start` is `unsafe`; its pre-work rejection statuses are 400, 422 and 429.
 *
 * Scale: 1 case-second = 10 ms.
 * Differences by design:
 * - (a) The executor never retries FAILED_NO_EFFECT by itself (there is no `autoRetryNoEffect`):
 *   the model decides from `retry_safe`. The second call comes from the test acting as the agent,
 *   after the 1 s Retry-After. The envelope does not carry Retry-After (IntentError has no field
 *   for it), so the agent waits the documented second.
 * - (b)/(c) The executor's first probe runs at once on the 502/504 (t=60), not at t=61.
 */

import { type FakeRemote, startFakeRemote } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canon } from "../../src/canon.ts";
import { createExecutor } from "../../src/executor.ts";
import { MemoryIntentStore } from "../../src/memory-intent-store.ts";
import { clientRefTool, scaledOptions, sleep, Timeline } from "./support.ts";

const S = 10;
let remote: FakeRemote;
let store: MemoryIntentStore;

beforeEach(async () => {
  remote = await startFakeRemote({ honorsKey: false });
  store = new MemoryIntentStore();
});
afterEach(async () => {
  await remote.close();
});

function investigationTool() {
  return clientRefTool(remote.url, {
    name: "investigation.start",
    identity: { tenantId: canon.exact, alertId: canon.upper },
    timeoutMs: 90 * S, // read timeout 90 s
    noEffectStatuses: [400, 422, 429],
  });
}

const run = (executor: ReturnType<typeof createExecutor>, tl: Timeline) =>
  executor.call({
    runId: "run-05",
    stepId: "investigate",
    tool: "investigation.start",
    args: { tenantId: "ten-01", alertId: "AL-0001" },
    deadline: tl.deadline(100),
  });

describe("field-t05-post-replayed-on-5xx", () => {
  it("(a) 429 with Retry-After: 1 from the proxy → FAILED_NO_EFFECT; a call sooner sends nothing; the agent's call after 1 s → SUCCEEDED, one job", async () => {
    const tl = new Timeline(S);
    const executor = createExecutor({ store, tools: [investigationTool()], ...scaledOptions(S) });
    remote.fault({ commit: false, answer: 429, headers: { "retry-after": "1" } }, { commitDelayMs: 0.1 * S });

    const first = await run(executor, tl);
    expect(first).toMatchObject({
      status: "FAILED_NO_EFFECT",
      retry_safe: true,
      attempt: 1,
      error: { code: "REJECTED", httpStatus: 429 },
    });
    expect(remote.effects).toHaveLength(0);

    expect(first.retry_after_ms).toBeGreaterThan(0);
    expect(first.retry_after_ms).toBeLessThanOrEqual(1000);
    // A repeat call inside the remote's Retry-After window is answered without sending (issue 9 §7).
    const tooSoon = await run(executor, tl);
    expect(tooSoon).toMatchObject({ status: "FAILED_NO_EFFECT", replayed: true, attempt: 1 });
    expect(tooSoon.retry_after_ms).toBeGreaterThan(0);
    expect(remote.posts).toBe(1);

    await sleep(first.retry_after_ms ?? 1000); // Retry-After: 1 (seconds, not scaled)
    const second = await run(executor, tl);
    expect(second).toMatchObject({
      status: "SUCCEEDED",
      retry_safe: true,
      attempt: 2,
      replayed: false,
      idempotency_key: first.idempotency_key,
    });
    expect(remote.posts).toBe(2); // attempts: 2 (both reached the proxy)
    expect(remote.effects).toHaveLength(1);
    // Both sends carried the same client reference (the same key).
    expect(remote.bodiesSeen.map((b) => (b as { clientRef: string }).clientRef)).toEqual([
      first.idempotency_key,
      first.idempotency_key,
    ]);
  });

  for (const status of [502, 504] as const) {
    const sub = status === 502 ? "(b)" : "(c)";
    it(`${sub} the proxy answers ${status} at t=60 while the job runs → UNKNOWN → probe finds it running → SUCCEEDED, no resend`, async () => {
      const tl = new Timeline(S);
      const executor = createExecutor({ store, tools: [investigationTool()], ...scaledOptions(S) });
      remote.fault({ commitDelayMs: 0.1 * S, state: "running", answer: status, respondDelayMs: 59.9 * S });

      tl.start();
      const env = await run(executor, tl);
      expect(tl.t()).toBeGreaterThanOrEqual(60);
      expect(env).toMatchObject({
        status: "SUCCEEDED",
        retry_safe: true,
        attempt: 1,
        resolution: "found",
        result: { state: "running" },
      });
      expect(remote.posts).toBe(1);
      expect(remote.effects).toHaveLength(1);
      const record = await store.get(env.idempotency_key);
      expect(record?.status).toBe("SUCCEEDED");
      const outcome = (await store.listEvents(env.idempotency_key)).find((e) => e.type === "outcome");
      expect(outcome?.data).toMatchObject({ outcome: "UNKNOWN", code: "GATEWAY_5XX" });
    });
  }
});
