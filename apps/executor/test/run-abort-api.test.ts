/**
 * Rule 13 over the API (issue 20 §1): `runs.abort` (an agent) and `runs.operatorAbort` (an operator)
 * record the abort with the run — who, when, why, the first one's kept — before anything is undone;
 * `runs.get` and `runs.list` show it with the steps by where they stand; a new step of the aborted run
 * over `calls.execute` is refused before sending (nothing at the remote) while a repeat replays.
 */
import { randomUUID } from "node:crypto";
import type { FakeRemote } from "@tristate/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reversibleRefundTools } from "./reversible-refund.ts";
import { type Json, startStack, type TestStack } from "./support.ts";

let stack: TestStack;
beforeAll(async () => {
  stack = await startStack({ tools: (remote: FakeRemote) => reversibleRefundTools(remote) });
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

const refunds = () => stack.remote.effects.filter((e) => e.body.kind !== "reversal");
const reversals = () => stack.remote.effects.filter((e) => e.body.kind === "reversal");
const refund = (runId: string, stepId: string, order: string) =>
  stack.post("calls.execute", {
    runId,
    stepId,
    tool: "issue_refund",
    args: { order_id: order, amount: "5.00" },
    budgetMs: 8000,
  });

describe("runs.abort and runs.operatorAbort record the abort with the run (rule 13)", () => {
  it("an agent's abort: who, when and why in the report and on runs.get / runs.list; a new step is refused unsent, a repeat replays", async () => {
    const runId = `run-${randomUUID().slice(0, 8)}`;
    const paid = await refund(runId, "pay", "A-1");
    expect(paid.json.result.data.status).toBe("SUCCEEDED");
    const before = Date.now();
    const aborted = await stack.post("runs.abort", { runId, reason: "the user changed their mind", budgetMs: 8000 });
    expect(aborted.status, JSON.stringify(aborted.json)).toBe(200);
    const report = aborted.json.result.data;
    expect(report).toMatchObject({ runId, complete: true, undone: 1, inFlight: 0, needsHuman: 0 });
    expect(report.abort).toMatchObject({
      runId,
      actorName: "agent key",
      via: "agent",
      reason: "the user changed their mind",
    });
    expect(report.abort.abortedAtEpochMs).toBeGreaterThan(before - 60_000);
    expect(reversals()).toHaveLength(1);

    const run = (await stack.get("runs.get", { runId }, stack.keys.viewer)).json.result.data;
    expect(run.abort).toEqual({
      abortedAtEpochMs: report.abort.abortedAtEpochMs,
      actorName: "agent key",
      via: "agent",
      reason: "the user changed their mind",
      undone: [paid.json.result.data.idempotency_key],
      inFlight: [],
      waitingForPerson: [],
      complete: true,
    });
    const list = (await stack.get("runs.list", {}, stack.keys.viewer)).json.result.data;
    expect(list.items.find((r: Json) => r.runId === runId)).toMatchObject({
      status: "aborted",
      abortedAtEpochMs: report.abort.abortedAtEpochMs,
    });

    const refundsBefore = refunds().length;
    const next = await refund(runId, "pay-more", "A-2");
    expect(next.status).toBe(200);
    expect(next.json.result.data).toMatchObject({
      status: "FAILED_NO_EFFECT",
      retry_safe: false,
      error: { code: "RUN_ABORTED_BEFORE_SEND" },
    });
    expect(next.json.result.data.message).toContain("aborted");
    expect(refunds()).toHaveLength(refundsBefore);
    const repeat = await refund(runId, "pay", "A-1");
    expect(repeat.json.result.data).toMatchObject({ status: "SUCCEEDED", replayed: true });
    expect(refunds()).toHaveLength(refundsBefore);
    expect((await stack.get("runs.get", { runId })).json.result.data.records).toHaveLength(2);
  });

  it("an operator's abort: the operator and the note; a later abort by the agent keeps the first one's", async () => {
    const runId = `run-${randomUUID().slice(0, 8)}`;
    await refund(runId, "pay", "B-1");
    const first = await stack.post("runs.operatorAbort", { runId, note: "fraud suspected" }, stack.keys.operator);
    expect(first.status, JSON.stringify(first.json)).toBe(200);
    expect(first.json.result.data.abort).toMatchObject({
      actorName: "operator key",
      via: "operator",
      reason: "fraud suspected",
    });
    const second = await stack.post("runs.abort", { runId, reason: "me too", budgetMs: 8000 });
    expect(second.json.result.data.abort).toEqual(first.json.result.data.abort);
    expect(second.json.result.data.steps[0]).toMatchObject({
      outcome: "compensated",
      compensation: { replayed: true },
    });
    const run = (await stack.get("runs.get", { runId })).json.result.data;
    expect(run.abort).toMatchObject({
      actorName: "operator key",
      via: "operator",
      reason: "fraud suspected",
      complete: true,
    });
  });

  it("a run aborted before its first call: runs.get shows the abort; its first step is refused, nothing sent", async () => {
    const runId = `run-${randomUUID().slice(0, 8)}`;
    const aborted = await stack.post("runs.abort", { runId, budgetMs: 8000 });
    expect(aborted.json.result.data).toMatchObject({ complete: true, steps: [], abort: { reason: "" } });
    const refundsBefore = refunds().length;
    const first = await refund(runId, "pay", "C-1");
    expect(first.json.result.data.error.code).toBe("RUN_ABORTED_BEFORE_SEND");
    expect(refunds()).toHaveLength(refundsBefore);
    const run = (await stack.get("runs.get", { runId })).json.result.data;
    expect(run).toMatchObject({ records: [], abort: { via: "agent", complete: true, undone: [] } });
  });
});
