/**
 * `runs.list` over HTTP on PostgreSQL (issue 14 §3): the runs of a window with their status, tools and
 * counts; the status and tool filters; keyset pages that neither repeat nor skip a run while agents
 * keep calling; another tenant's runs never listed; bad input answered 400 naming the field.
 */

import { ApiKeyStore } from "@tristate/db";
import type { FakeRemote } from "@tristate/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reversibleRefundTools } from "./reversible-refund.ts";
import { type Json, startStack, type TestStack } from "./support.ts";

/** The refund with a compensation (reverse_refund). */
const tools = (remote: FakeRemote) => reversibleRefundTools(remote);

let stack: TestStack;
const acme = {} as Record<"agent" | "viewer" | "operator", string>;
let n = 0;

/** One refund call of `runId` by `agent` (default tenant's agent when absent). */
async function call(runId: string, agent?: string): Promise<Json> {
  n++;
  const res = await stack.post(
    "calls.execute",
    { runId, stepId: `s${n}`, tool: "issue_refund", args: { order_id: `O-${n}`, amount: "5.00" }, budgetMs: 8000 },
    agent ?? stack.keys.agent,
  );
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json.result.data;
}

const runs = async (input: Record<string, unknown> = {}, key?: string) => {
  const res = await stack.get("runs.list", input, key ?? stack.keys.viewer);
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json.result.data as { items: Json[]; nextCursor: string | null; fromEpochMs: number; toEpochMs: number };
};
const ids = (items: Json[]) => items.map((r) => `${r.tenant}/${r.runId}`);

beforeAll(async () => {
  stack = await startStack({ tools, env: { TRISTATE_PROBE_SPACING_MS: "0", TRISTATE_PROBE_ATTEMPTS: "1" } });
  const keys = new ApiKeyStore(stack.service.services.store.prisma);
  for (const role of ["agent", "viewer", "operator"] as const) {
    acme[role] = (await keys.create({ name: `acme ${role}`, role, tenant: "acme" })).secret;
  }
  await call("run-done");
  await call("run-done");
  const unknown = await call("run-unknown");
  // The agent was answered after the claim; its outcome is written in the background. Let it land
  // before rewriting the row by hand, or the (version-checked) outcome write overwrites the UNKNOWN.
  await stack.service.services.tenants.outcomesWritten();
  await stack.service.services.store.pool.query(
    "UPDATE intent_records SET status = 'UNKNOWN', finished_at = NULL WHERE tenant = 'default' AND key = $1",
    [unknown.idempotency_key],
  );
  await call("run-aborted");
  const aborted = await stack.post("runs.operatorAbort", { runId: "run-aborted", note: "test" }, stack.keys.operator);
  expect(aborted.status, JSON.stringify(aborted.json)).toBe(200);
  // A run with nothing to undo, aborted by an operator: aborted by its audit entry alone.
  stack.remote.fault({ commit: false, answer: 422 });
  expect((await call("run-nothing")).status).toBe("FAILED_NO_EFFECT");
  const nothing = await stack.post("runs.operatorAbort", { runId: "run-nothing", note: "test" }, stack.keys.operator);
  expect(nothing.json.result.data.steps).toMatchObject([{ outcome: "no_effect" }]);
  // The same run id in tenant acme.
  await call("run-done", acme.agent);
}, 90_000);
afterAll(async () => {
  await stack?.close();
});

describe("runs.list over HTTP", () => {
  it("lists the tenant's runs of the last 24 h with status, tools, steps and counts", async () => {
    const page = await runs();
    expect(page.toEpochMs - page.fromEpochMs).toBe(24 * 3_600_000);
    const by = (id: string) => page.items.find((r) => r.runId === id);
    expect(page.items.every((r) => r.tenant === "default")).toBe(true);
    expect(by("run-done")).toMatchObject({ status: "completed", steps: 2, tools: ["issue_refund"], unknownCount: 0 });
    expect(by("run-unknown")).toMatchObject({
      status: "needs_attention",
      unresolvedUnknownCount: 1,
      unknownCount: 1,
      needsHumanCount: 0,
    });
    expect(by("run-aborted")).toMatchObject({ status: "aborted", steps: 2, tools: ["issue_refund", "reverse_refund"] });
    expect(by("run-nothing")).toMatchObject({ status: "aborted", steps: 1 });
    const done = by("run-done");
    expect(done.lastActivityEpochMs).toBeGreaterThanOrEqual(done.startedAtEpochMs);
    expect(done.durationMs).toBeGreaterThanOrEqual(0);
    expect(page.items.map((r) => r.startedAtEpochMs)).toEqual(
      [...page.items.map((r) => r.startedAtEpochMs)].sort((a, b) => b - a),
    );
  });

  it("filters by status and by tool", async () => {
    const runIds = async (input: Record<string, unknown>) => (await runs(input)).items.map((r) => r.runId).sort();
    expect(await runIds({ status: "aborted" })).toEqual(["run-aborted", "run-nothing"]);
    expect(await runIds({ status: "needs_attention" })).toEqual(["run-unknown"]);
    expect(await runIds({ status: "open" })).toEqual([]);
    expect(await runIds({ tool: "reverse_refund" })).toEqual(["run-aborted"]);
    expect(await runIds({ tool: "reverse_refund", status: "completed" })).toEqual([]);
    // A case-insensitive substring of the tool name; `_` is a plain character.
    expect(await runIds({ tool: "REVERSE" })).toEqual(["run-aborted"]);
    expect(await runIds({ tool: "se_r" })).toEqual(["run-aborted"]);
    expect(await runIds({ tool: "s_e" })).toEqual([]); // as a wildcard, `_` would match "issue"
    expect(await runIds({ fromEpochMs: Date.now() + 60_000, toEpochMs: Date.now() + 120_000 })).toEqual([]);
  });

  it("another tenant's runs are never listed; a non-admin may not name another tenant; admins filter by tenant", async () => {
    expect(ids((await runs({}, acme.viewer)).items)).toEqual(["acme/run-done"]);
    expect(ids((await runs({}, acme.operator)).items)).toEqual(["acme/run-done"]);
    const named = await stack.get("runs.list", { tenant: "default" }, acme.viewer);
    expect(named.status).toBe(403);
    expect(named.json.error.data.field).toBe("tenant");
    expect(ids((await runs({ tenant: "acme" }, stack.keys.admin)).items)).toEqual(["acme/run-done"]);
    const all = ids((await runs({}, stack.keys.admin)).items);
    expect(all).toContain("acme/run-done");
    expect(all).toContain("default/run-done");
    expect((await stack.get("runs.list", {}, stack.keys.agent)).status).toBe(403);
  });

  it("keyset pages: every run once, in order, while agents keep calling (new runs, new steps of listed runs)", async () => {
    for (let i = 0; i < 7; i++) await call(`run-page-${i}`);
    const window = { fromEpochMs: Date.now() - 3_600_000, toEpochMs: Date.now() + 3_600_000 };
    const whole = (await runs({ ...window, limit: 200 })).items;
    const paged: Json[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await runs({ ...window, limit: 3, ...(cursor ? { cursor } : {}) });
      paged.push(...page.items);
      cursor = page.nextCursor;
      pages++;
      await call(`run-new-${pages}`);
      await call("run-page-3");
    } while (cursor);
    expect(ids(paged)).toEqual(ids(whole));
    expect(new Set(ids(paged)).size).toBe(whole.length);
    expect(pages).toBe(Math.ceil(whole.length / 3));
    // The new runs are on the first page of a fresh listing.
    expect((await runs({ ...window, limit: 3 })).items[0].runId).toMatch(/^run-new-/);
  });

  it("bad input is answered 400 naming the field", async () => {
    const now = Date.now();
    const bad = async (input: unknown, field: string) => {
      const res = await stack.get("runs.list", input, stack.keys.viewer);
      expect(res.status, JSON.stringify(res.json)).toBe(400);
      expect(res.json.error.data.field).toBe(field);
    };
    await bad({ fromEpochMs: now, toEpochMs: now - 1 }, "toEpochMs");
    await bad({ fromEpochMs: now - 40 * 86_400_000, toEpochMs: now }, "toEpochMs");
    await bad({ cursor: "forged" }, "cursor");
    await bad({ limit: 201 }, "limit");
    await bad({ status: "stuck" }, "status");
    await bad({ tool: "" }, "tool");
    await bad({ fromEpochMs: 1.5 }, "fromEpochMs");
    await bad({ surprise: 1 }, "surprise");
    // Only a start: the end defaults to now, so the start is at fault (issue 14: blamed toEpochMs).
    const res = await stack.get("runs.list", { fromEpochMs: 0 }, stack.keys.viewer);
    expect(res.status).toBe(400);
    expect(res.json.error.data.field).toBe("fromEpochMs");
    expect(res.json.error.message).toMatch(/fromEpochMs: must be at most 31 days before toEpochMs \(default: now\)/);
  });

  it("a run with only a declared plan (no call yet) is listed as open and opens with its plan (issue 14)", async () => {
    const steps = [{ stepId: "first", tool: "issue_refund" }];
    const planned = await stack.post("runs.plan", { runId: "run-plan-only", steps }, stack.keys.agent);
    expect(planned.status, JSON.stringify(planned.json)).toBe(200);
    const listed = (await runs()).items.find((r) => r.runId === "run-plan-only");
    expect(listed).toMatchObject({ status: "open", steps: 0, tools: [], unresolvedUnknownCount: 0 });
    const got = await stack.get("runs.get", { runId: "run-plan-only" }, stack.keys.viewer);
    expect(got.status, JSON.stringify(got.json)).toBe(200);
    expect(got.json.result.data).toMatchObject({ runId: "run-plan-only", records: [], plan: { steps } });
    // Not another tenant's.
    expect((await stack.get("runs.get", { runId: "run-plan-only" }, acme.viewer)).status).toBe(404);
    expect((await runs({}, acme.viewer)).items.map((r) => r.runId)).not.toContain("run-plan-only");
  });
});
