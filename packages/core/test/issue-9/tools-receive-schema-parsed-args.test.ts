/**
 * Issue 9 §6b: tools always receive schema-parsed arguments — first sends, new attempts, resends
 * after an UNKNOWN, operator resends and probes alike. A `z.coerce.date()` field is stored as JSON
 * (an ISO string) but must reach `invoke` and the probes as a `Date`; otherwise the tool throws
 * before any I/O and every call ends in the human queue.
 */

import { type FakeRemote, startFakeRemote } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { canon } from "../../src/canon.ts";
import { Deadline } from "../../src/deadline.ts";
import { createExecutor, type Executor } from "../../src/executor.ts";
import { callHttp } from "../../src/http.ts";
import { MemoryIntentStore } from "../../src/memory-intent-store.ts";
import { defineTool } from "../../src/tool.ts";

const shipArgs = z.object({ order_id: z.string().min(1), ship_on: z.coerce.date() });
const SHIP = { order_id: "A-1182", ship_on: "2026-07-01" };

let remote: FakeRemote;
let store: MemoryIntentStore;
/** What each invoke and probe received as `ship_on`. */
let seen: { where: "invoke" | "probe"; isDate: boolean; type: string }[];

beforeEach(async () => {
  remote = await startFakeRemote({ honorsKey: true });
  store = new MemoryIntentStore();
  seen = [];
});
afterEach(async () => {
  await remote.close();
});

function note(where: "invoke" | "probe", value: unknown): Date {
  seen.push({ where, isDate: value instanceof Date, type: Object.prototype.toString.call(value) });
  if (!(value instanceof Date)) throw new TypeError(`ship_on must be a Date, got ${typeof value}`);
  return value;
}

function executor(): Executor {
  const ship = defineTool({
    name: "schedule_shipment",
    kind: "idempotent_by_key",
    args: shipArgs,
    identity: { order_id: canon.upper },
    timeoutMs: 500,
    invoke: async (args, ctx) => {
      const day = note("invoke", args.ship_on).toISOString().slice(0, 10); // throws before any I/O otherwise
      return (await callHttp(ctx, { method: "POST", url: `${remote.url}/effects`, body: { ...args, ship_on: day } }))
        .body;
    },
    probe: async (args, ctx) => {
      note("probe", args.ship_on);
      const res = await callHttp(ctx, {
        method: "GET",
        url: `${remote.url}/effects?clientRef=${encodeURIComponent(ctx.clientRef)}`,
      });
      return (res.body as unknown[])[0] ?? null;
    },
  });
  return createExecutor({ store, tools: [ship], probe: { spacingMs: 10, attempts: 3, timeoutMs: 500 } });
}

const schedule = (ex: Executor, stepId = "ship") =>
  ex.call({ runId: "run-6b", stepId, tool: "schedule_shipment", args: SHIP, deadline: Deadline.after(5_000) });

async function expectNoHumanQueue(key: string): Promise<void> {
  const record = await store.get(key);
  expect(record?.needsHuman).toBe(false);
  expect(record?.resolution).not.toBe("needs_human");
  expect((await store.listEvents(key)).filter((e) => e.type === "needs_human")).toEqual([]);
}

describe("issue 9 §6b: invoke and probes receive the schema-parsed arguments (z.coerce.date())", () => {
  it("first send: invoke receives a Date → SUCCEEDED, one effect", async () => {
    const ex = executor();
    const env = await schedule(ex);
    expect(env).toMatchObject({ status: "SUCCEEDED", attempt: 1 });
    expect(seen).toEqual([{ where: "invoke", isDate: true, type: "[object Date]" }]);
    expect(remote.bodiesSeen).toEqual([{ order_id: "A-1182", ship_on: "2026-07-01" }]);
    expect(remote.effects).toHaveLength(1);
    await expectNoHumanQueue(env.idempotency_key);
  });

  it("resend after UNKNOWN (reset, key probe absent): the probes and the resend receive a Date → SUCCEEDED absent_resent", async () => {
    const ex = executor();
    remote.fault({ commit: false, answer: "reset" });
    const env = await schedule(ex);
    expect(env).toMatchObject({ status: "SUCCEEDED", resolution: "absent_resent", attempt: 2 });
    // 1 first send, 3 spaced probes that found nothing, 1 resend: every one got a Date.
    expect(seen.map((s) => s.where)).toEqual(["invoke", "probe", "probe", "probe", "invoke"]);
    expect(seen.every((s) => s.isDate)).toBe(true);
    expect(remote.posts).toBe(2);
    expect(remote.effects).toHaveLength(1);
    expect(new Set(remote.keysSeen)).toEqual(new Set([env.idempotency_key]));
    for (const body of remote.bodiesSeen) expect(body).toEqual({ order_id: "A-1182", ship_on: "2026-07-01" });
    await expectNoHumanQueue(env.idempotency_key);
  });

  it("reconcileKey later (probes failing at first): the probes and the resend still receive a Date", async () => {
    const ex = executor();
    remote.fault({ commit: false, answer: "reset" });
    remote.probesFail = true;
    const first = await schedule(ex);
    expect(first).toMatchObject({ status: "UNKNOWN", retry_safe: false });
    remote.probesFail = false;
    const settled = await ex.reconcileKey(first.idempotency_key, Deadline.after(5_000));
    expect(settled).toMatchObject({ status: "SUCCEEDED", resolution: "absent_resent" });
    expect(seen.filter((s) => s.where === "probe").length).toBeGreaterThanOrEqual(6);
    expect(seen.every((s) => s.isDate)).toBe(true);
    expect(remote.effects).toHaveLength(1);
    await expectNoHumanQueue(first.idempotency_key);
  });

  it("operator resend_same_key: invoke receives a Date → SUCCEEDED human_resent, one effect", async () => {
    const ex = executor();
    remote.fault({ commit: false, answer: "reset" });
    remote.probesFail = true; // nothing can be learnt: the record stays UNKNOWN for a person to act on
    const first = await schedule(ex);
    expect(first).toMatchObject({ status: "UNKNOWN" });
    const record = (await store.get(first.idempotency_key))!;
    seen = [];

    const res = await ex.resolve({
      key: record.key,
      action: "resend_same_key",
      note: "carrier portal shows no shipment",
      expectedVersion: record.version,
      operatorActionId: "op-ship-resend-1",
      actor: { keyId: "key-ana", name: "ana" },
    });
    expect(res.record).toMatchObject({ status: "SUCCEEDED", resolution: "human_resent", needsHuman: false });
    expect(res.envelope).toMatchObject({ status: "SUCCEEDED", resolution: "human_resent" });
    expect(seen).toEqual([{ where: "invoke", isDate: true, type: "[object Date]" }]);
    expect(remote.effects).toHaveLength(1);
    expect(remote.bodiesSeen.at(-1)).toEqual({ order_id: "A-1182", ship_on: "2026-07-01" });
    await expectNoHumanQueue(record.key);
  });

  it("a new attempt after FAILED_NO_EFFECT (422) receives a Date too", async () => {
    const ex = executor();
    remote.fault({ commit: false, answer: 422 });
    const refused = await schedule(ex);
    expect(refused).toMatchObject({ status: "FAILED_NO_EFFECT", retry_safe: true });
    const again = await schedule(ex);
    expect(again).toMatchObject({ status: "SUCCEEDED", attempt: 2 });
    expect(seen.map((s) => [s.where, s.isDate])).toEqual([
      ["invoke", true],
      ["invoke", true],
    ]);
    expect(remote.effects).toHaveLength(1);
    await expectNoHumanQueue(again.idempotency_key);
  });

  it("the operator's probe re-run (rerunProbes) hands the probe a Date too, and finds the shipment", async () => {
    const ex = executor();
    const env = await schedule(ex);
    expect(env.status).toBe("SUCCEEDED");
    seen = [];
    const report = await ex.rerunProbes(env.idempotency_key);
    expect(seen).toEqual([{ where: "probe", isDate: true, type: "[object Date]" }]);
    expect(report.probes[0]).toMatchObject({ probe: "key", answer: "found" });
  });

  it("a type-changing transform (amount: string → number) survives the round trip: probes and the resend after UNKNOWN get the parsed number", async () => {
    const got: unknown[] = [];
    const refund = defineTool({
      name: "refund_cents",
      kind: "idempotent_by_key",
      args: z.object({ order_id: z.string(), amount: z.string().transform((s) => Math.round(Number(s) * 100)) }),
      identity: { order_id: canon.upper, amount: canon.decimal(0) },
      timeoutMs: 500,
      invoke: async (args, ctx) => {
        got.push(args.amount);
        if (typeof args.amount !== "number") throw new TypeError("amount must be a number of cents");
        return (await callHttp(ctx, { method: "POST", url: `${remote.url}/effects`, body: args })).body;
      },
      probe: async (args, ctx) => {
        got.push(args.amount);
        const res = await callHttp(ctx, {
          method: "GET",
          url: `${remote.url}/effects?clientRef=${encodeURIComponent(ctx.clientRef)}`,
        });
        return (res.body as unknown[])[0] ?? null;
      },
    });
    const ex = createExecutor({ store, tools: [refund], probe: { spacingMs: 10, attempts: 3, timeoutMs: 500 } });
    remote.fault({ commit: false, answer: "reset" });
    const env = await ex.call({
      runId: "run-6b",
      stepId: "refund",
      tool: "refund_cents",
      args: { order_id: "A-1182", amount: "49.90" },
      deadline: Deadline.after(5_000),
    });
    expect(got).toEqual([4990, 4990, 4990, 4990, 4990]); // first send, 3 probes, the resend
    expect(env).toMatchObject({ status: "SUCCEEDED", resolution: "absent_resent" });
    expect(remote.effects).toHaveLength(1);
    await expectNoHumanQueue(env.idempotency_key);
  });
});
