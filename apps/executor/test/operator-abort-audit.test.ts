/**
 * Operators' run aborts in the audit (issue 14 §3): `runs.operatorAbort` writes one `abort_run` entry
 * (actor, run, reason, the report's summary and steps) in the run's tenant, once per operatorActionId;
 * `audit.list` shows it to that tenant's readers (and admins) only.
 */
import { randomUUID } from "node:crypto";
import { ApiKeyStore } from "@tristate/db";
import type { FakeRemote } from "@tristate/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reversibleRefundTools } from "./reversible-refund.ts";
import { type Json, startStack, type TestStack } from "./support.ts";

const tools = (remote: FakeRemote) => reversibleRefundTools(remote);

let stack: TestStack;
const acme = {} as Record<"agent" | "viewer" | "operator", string>;
let n = 0;

/** A run with one confirmed refund, made by `agent`. */
async function refundRun(agent?: string): Promise<string> {
  n++;
  const runId = `run-audit-${n}-${randomUUID().slice(0, 8)}`;
  const res = await stack.post(
    "calls.execute",
    { runId, stepId: "pay", tool: "issue_refund", args: { order_id: `O-${n}`, amount: "5.00" }, budgetMs: 8000 },
    agent ?? stack.keys.agent,
  );
  expect(res.json.result.data.status, JSON.stringify(res.json)).toBe("SUCCEEDED");
  return runId;
}

const abortEntries = async (key: string, input: Record<string, unknown> = {}) => {
  const res = await stack.get("audit.list", { action: "abort_run", ...input }, key);
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json.result.data.entries as Json[];
};
const rowsOf = async (runId: string) =>
  (
    await stack.service.services.store.pool.query<{ tenant: string; operator_action_id: string }>(
      "SELECT tenant, operator_action_id FROM audit_entries WHERE key = $1",
      [`run:${runId}`],
    )
  ).rows;

beforeAll(async () => {
  stack = await startStack({ tools });
  const keys = new ApiKeyStore(stack.service.services.store.prisma);
  for (const role of ["agent", "viewer", "operator"] as const) {
    acme[role] = (await keys.create({ name: `acme ${role}`, role, tenant: "acme" })).secret;
  }
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

describe("runs.operatorAbort writes an audit entry", () => {
  it("one entry per operatorActionId: actor, run, reason, the report's summary and steps; a repeat writes none", async () => {
    const runId = await refundRun();
    const id = randomUUID();
    const first = await stack.post(
      "runs.operatorAbort",
      { runId, note: "customer cancelled", operatorActionId: id },
      stack.keys.operator,
    );
    expect(first.status, JSON.stringify(first.json)).toBe(200);
    const report = first.json.result.data;
    expect(report.audit).toMatchObject({ operatorActionId: id, actor: "operator key", replayed: false });
    const [entry] = (await abortEntries(stack.keys.viewer)).filter((e) => e.runId === runId);
    expect(entry).toMatchObject({
      id: report.audit.id,
      tenant: "default",
      operatorActionId: id,
      actorName: "operator key",
      action: "abort_run",
      note: "customer cancelled",
      key: `run:${runId}`,
      tool: "",
      runId,
      report: {
        summary: report.summary,
        complete: true,
        needsHuman: 0,
        steps: [{ stepId: "pay", tool: "issue_refund", status: "SUCCEEDED", outcome: "compensated" }],
      },
    });
    expect(entry.actorKeyId).toMatch(/.+/);
    expect(entry.atEpochMs).toBe(report.audit.atEpochMs);

    const again = await stack.post(
      "runs.operatorAbort",
      { runId, note: "double click", operatorActionId: id },
      stack.keys.operator,
    );
    expect(again.status, JSON.stringify(again.json)).toBe(200);
    expect(again.json.result.data.audit).toMatchObject({ id: report.audit.id, replayed: true });
    expect(await rowsOf(runId)).toHaveLength(1);
    // Exactly one reversal at the remote: the repeat replayed the compensation.
    expect(stack.remote.effects.filter((e) => e.body.refund_id !== undefined)).toHaveLength(1);
  });

  it("an id used for another run is refused (409 naming operatorActionId) before anything is done", async () => {
    const first = await refundRun();
    const other = await refundRun();
    const id = randomUUID();
    expect(
      (await stack.post("runs.operatorAbort", { runId: first, note: "x", operatorActionId: id }, stack.keys.operator))
        .status,
    ).toBe(200);
    const reused = await stack.post(
      "runs.operatorAbort",
      { runId: other, note: "x", operatorActionId: id },
      stack.keys.operator,
    );
    expect(reused.status, JSON.stringify(reused.json)).toBe(409);
    expect(reused.json.error.data.field).toBe("operatorActionId");
    expect(await rowsOf(other)).toHaveLength(0);
    const records = await stack.service.services.tenants.store("default").listByRun(other);
    expect(records.map((r) => r.stepId)).toEqual(["pay"]);
    const bad = await stack.post(
      "runs.operatorAbort",
      { runId: other, note: "x", operatorActionId: "no" },
      stack.keys.operator,
    );
    expect(bad.status).toBe(400);
    expect(bad.json.error.data.field).toBe("operatorActionId");
  });

  it("without an operatorActionId every abort is an entry of its own", async () => {
    const runId = await refundRun();
    for (const note of ["first", "second"]) {
      const res = await stack.post("runs.operatorAbort", { runId, note }, stack.keys.operator);
      expect(res.status, JSON.stringify(res.json)).toBe(200);
    }
    const entries = (await abortEntries(stack.keys.operator)).filter((e) => e.runId === runId);
    expect(entries.map((e) => e.note)).toEqual(["second", "first"]);
    expect(new Set(entries.map((e) => e.operatorActionId)).size).toBe(2);
  });

  it("tenant-scoped: written in the run's tenant, listed to its readers and admins only", async () => {
    const runId = await refundRun(acme.agent);
    const res = await stack.post("runs.operatorAbort", { runId, note: "acme abort" }, acme.operator);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect((await rowsOf(runId)).map((r) => r.tenant)).toEqual(["acme"]);
    expect((await abortEntries(acme.viewer)).map((e) => e.runId)).toEqual([runId]);
    expect((await abortEntries(stack.keys.viewer)).some((e) => e.runId === runId)).toBe(false);
    const admin = await abortEntries(stack.keys.admin, { tenant: "acme" });
    expect(admin.map((e) => [e.tenant, e.runId])).toEqual([["acme", runId]]);
    // An admin aborting in another tenant writes the entry there, under the admin's name.
    const other = await refundRun(acme.agent);
    const byAdmin = await stack.post(
      "runs.operatorAbort",
      { runId: other, note: "admin", tenant: "acme" },
      stack.keys.admin,
    );
    expect(byAdmin.status, JSON.stringify(byAdmin.json)).toBe(200);
    expect((await abortEntries(acme.viewer)).find((e) => e.runId === other)).toMatchObject({ actorName: "admin key" });
  });

  it("the record actions' audit is unchanged: their filter leaves run aborts out", async () => {
    const res = await stack.get("audit.list", { action: "compensate" }, stack.keys.viewer);
    expect(res.status).toBe(200);
    expect(res.json.result.data.entries).toEqual([]);
    const all = await stack.get("audit.list", {}, stack.keys.viewer);
    expect(all.json.result.data.entries.every((e: Json) => e.action === "abort_run")).toBe(true);
  });
});
