/**
 * Issue 9 §7 (partial answers): an invoke that throws `AmbiguousError` with code `PARTIAL_EFFECT`
 * ("2 of 3 items failed") took part of its effect. No probe can say "done" or "not done" for the
 * whole: the record goes straight to the human queue (UNKNOWN, `needs_human`, `retry_safe: false`)
 * and no probe runs — even though the tool's key probe would "find" the part that took effect —
 * neither on the call nor on the agent's repeat call; nothing is resent.
 */

import { type FakeRemote, refundTool, startFakeRemote } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Deadline } from "../../src/deadline.ts";
import { AmbiguousError } from "../../src/errors.ts";
import { createExecutor, type Executor } from "../../src/executor.ts";
import { callHttp } from "../../src/http.ts";
import { MemoryIntentStore } from "../../src/memory-intent-store.ts";
import { shownResolution } from "../../src/statuses.ts";

const REFUND = { order_id: "A-1182", amount: "49.90", currency: "EUR" };

let remote: FakeRemote;
let store: MemoryIntentStore;

beforeEach(async () => {
  remote = await startFakeRemote({ honorsKey: true });
  store = new MemoryIntentStore();
});
afterEach(async () => {
  await remote.close();
});

/**
 * A refund of three items: the remote makes the effect (so the key probe — by client reference —
 * and the identity probe would both find it), then the SDK reports that 2 of 3 items failed.
 */
function executor(): Executor {
  const tool = refundTool(remote, {
    invoke: async (args, ctx) => {
      await callHttp(ctx, { method: "POST", url: `${remote.url}/effects`, body: args });
      throw new AmbiguousError("2 of 3 items failed", { code: "PARTIAL_EFFECT" });
    },
  });
  return createExecutor({ store, tools: [tool], probe: { spacingMs: 5, attempts: 3, timeoutMs: 500 } });
}

const refund = (ex: Executor) =>
  ex.call({ runId: "run-pe", stepId: "refund", tool: "issue_refund", args: REFUND, deadline: Deadline.after(5_000) });

describe("issue 9 §7: PARTIAL_EFFECT goes straight to the human queue", () => {
  it("→ UNKNOWN, needs_human, error.code PARTIAL_EFFECT, retry_safe false; no probe runs", async () => {
    const ex = executor();
    const env = await refund(ex);
    expect(env).toMatchObject({
      status: "UNKNOWN",
      retry_safe: false,
      resolution: "needs_human",
      error: { code: "PARTIAL_EFFECT" },
    });
    expect(env.error?.message).toContain("2 of 3 items failed");
    expect(remote.probes).toBe(0);
    expect(remote.posts).toBe(1);
    expect(remote.effects).toHaveLength(1);

    const record = await store.get(env.idempotency_key);
    expect(record).toMatchObject({
      status: "UNKNOWN",
      needsHuman: true,
      error: { code: "PARTIAL_EFFECT" },
    });
    // `needs_human` is derived from `needsHuman`, never stored (issue 19).
    expect(shownResolution(record!)).toBe("needs_human");
    const events = await store.listEvents(env.idempotency_key);
    expect(events.filter((e) => e.type === "probe")).toEqual([]);
    expect(events.filter((e) => e.type === "needs_human")).toHaveLength(1);
    expect(events.find((e) => e.type === "needs_human")?.data).toMatchObject({ code: "PARTIAL_EFFECT" });
  });

  it("the agent's repeat call neither probes nor settles it SUCCEEDED, and sends nothing", async () => {
    const ex = executor();
    const first = await refund(ex);
    expect(first.error?.code).toBe("PARTIAL_EFFECT");

    const repeat = await refund(ex);
    expect(repeat).toMatchObject({
      status: "UNKNOWN",
      retry_safe: false,
      resolution: "needs_human",
      idempotency_key: first.idempotency_key,
    });
    expect(repeat.status).not.toBe("SUCCEEDED");
    expect(remote.probes).toBe(0);
    expect(remote.posts).toBe(1);
    const record = await store.get(first.idempotency_key);
    expect(record).toMatchObject({ status: "UNKNOWN", needsHuman: true, error: { code: "PARTIAL_EFFECT" } });
  });

  it("a later reconcileKey (as abortRun and re-checks call it) does not settle it by a probe either", async () => {
    const ex = executor();
    const first = await refund(ex);
    const swept = await ex.reconcileKey(first.idempotency_key, Deadline.after(5_000), "sweeper");
    expect(swept).toMatchObject({ status: "UNKNOWN", resolution: "needs_human" });
    expect(remote.probes).toBe(0);
    expect(remote.posts).toBe(1);
    expect((await store.get(first.idempotency_key))?.error?.code).toBe("PARTIAL_EFFECT");
  });

  it("abortRun reconciles UNKNOWN steps first: the partial one stays not_confirmed (never treated as a confirmed effect)", async () => {
    const ex = executor();
    const first = await refund(ex);
    const report = await ex.abortRun("run-pe", Deadline.after(5_000));
    expect(report.steps).toHaveLength(1);
    expect(report.steps[0]).toMatchObject({ key: first.idempotency_key, status: "UNKNOWN", outcome: "not_confirmed" });
    expect(report).toMatchObject({ complete: false, needsHuman: 1 });
    expect(remote.probes).toBe(0);
    expect((await store.get(first.idempotency_key))?.status).toBe("UNKNOWN");
  });
});
