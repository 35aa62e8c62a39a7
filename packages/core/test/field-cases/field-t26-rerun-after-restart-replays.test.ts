/**
 * T26 — A job is re-run minutes after it already charged a subscription (Sidekiq, Durable Task).
 * Source: https://github.com/sidekiq/sidekiq/issues/1762 (related: sidekiq/sidekiq#4112,
 * microsoft/durabletask-dotnet#465).
 *
 * Remote `billing-api` (the shared fake remote, charges numbered `CH-0001`…; `POST /effects`
 * stands for `POST /charges`): a normal, fast 201. The restart six minutes later uses a clock
 * jumped by 360 s ({@link JumpClock}); the new process also runs its sweeper first.
 */

import { type FakeRemote, startFakeRemote } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canon } from "../../src/canon.ts";
import { Deadline } from "../../src/deadline.ts";
import { createExecutor } from "../../src/executor.ts";
import { callHttp } from "../../src/http.ts";
import { MemoryIntentStore } from "../../src/memory-intent-store.ts";
import { sweepStale } from "../../src/sweeper.ts";
import { defineTool } from "../../src/tool.ts";
import { JumpClock } from "./support.ts";

let remote: FakeRemote;
let store: MemoryIntentStore;

beforeEach(async () => {
  remote = await startFakeRemote({ honorsKey: true, idFormat: (n) => `CH-${String(n).padStart(4, "0")}` });
  store = new MemoryIntentStore();
});
afterEach(async () => {
  await remote.close();
});

function chargeTool() {
  return defineTool({
    name: "billing.charge",
    kind: "idempotent_by_key",
    identity: { subscriptionId: canon.upper, period: canon.exact },
    timeoutMs: 2000,
    invoke: async (args, ctx) => {
      const res = await callHttp(ctx, { method: "POST", url: `${remote.url}/effects`, body: args });
      return { chargeId: (res.body as { id: string }).id };
    },
  });
}

describe("field-t26-rerun-after-restart-replays", () => {
  it("a re-run 6 minutes later in a new process returns the recorded charge, with no remote call", async () => {
    const clock = new JumpClock();
    const charge = () => ({
      runId: "run-26",
      stepId: "charge",
      tool: "billing.charge",
      args: { subscriptionId: "SUB-0001", period: "2025-01" },
      deadline: Deadline.after(10_000, clock),
    });
    const run1 = await createExecutor({ store, tools: [chargeTool()], clock }).call(charge());
    expect(run1).toMatchObject({ status: "SUCCEEDED", replayed: false, result: { chargeId: "CH-0001" } });

    clock.jump(360_000); // t=360: a new process
    const executor = createExecutor({ store, tools: [chargeTool()], clock });
    expect((await sweepStale({ store, executor })).taken).toBe(0); // a settled record is never swept
    const run2 = await executor.call(charge());
    expect(run2).toMatchObject({
      status: "SUCCEEDED",
      retry_safe: true,
      replayed: true,
      attempt: 1,
      idempotency_key: run1.idempotency_key,
      result: { chargeId: "CH-0001" },
    });
    expect(remote.posts).toBe(1);
    expect(remote.requests).toHaveLength(1);
    expect(remote.effects).toHaveLength(1);
  });
});
