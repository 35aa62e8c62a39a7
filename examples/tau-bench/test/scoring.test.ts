/** Scoring: duplicates, gaps and status lies from the effect log against the ground truth and the claims, totals. */
import { describe, expect, it } from "vitest";
import type { AgentRun, ReplayAction } from "../src/replay/agents.ts";
import {
  claimsOfRecords,
  claimsOfRun,
  compareEffects,
  countStatusLies,
  expectedEffects,
  NO_STATUS_LIES,
  scoreTask,
  totalsOf,
} from "../src/replay/scoring.ts";

const cancel = { tool: "cancel_pending_order", args: { order_id: "#W1", reason: "no longer needed" } };
const address = {
  tool: "modify_user_address",
  args: { user_id: "u1", address1: "1 Main St", address2: "", city: "X", state: "CA", country: "USA", zip: "1" },
};

describe("compareEffects", () => {
  it("counts nothing when the log equals the ground truth", () => {
    expect(compareEffects([cancel, address], [address, cancel])).toEqual({
      expected: 2,
      applied: 2,
      duplicates: 0,
      gaps: 0,
    });
  });

  it("counts an effect applied twice as one duplicate, and argument order or 247 vs 247.0 does not matter", () => {
    const reordered = { tool: cancel.tool, args: { reason: "no longer needed", order_id: "#W1" } };
    expect(compareEffects([cancel], [cancel, reordered])).toMatchObject({ duplicates: 1, gaps: 0 });
    const cert = { tool: "send_certificate", args: { user_id: "u", amount: 250 } };
    expect(compareEffects([cert], [{ tool: "send_certificate", args: { user_id: "u", amount: 250.0 } }])).toMatchObject(
      {
        duplicates: 0,
        gaps: 0,
      },
    );
  });

  it("counts a missing ground-truth effect as a gap, and an effect the ground truth never applies as a duplicate", () => {
    expect(compareEffects([cancel, address], [cancel])).toMatchObject({ duplicates: 0, gaps: 1 });
    const other = { tool: cancel.tool, args: { order_id: "#W2", reason: "no longer needed" } };
    expect(compareEffects([cancel], [other])).toMatchObject({ duplicates: 1, gaps: 1 });
    // Two identical ground-truth effects (idempotent address update twice): one applied → one gap.
    expect(compareEffects([address, address], [address])).toMatchObject({ duplicates: 0, gaps: 1 });
  });
});

describe("expectedEffects", () => {
  it("keeps write actions whose oracle output is an effect, not reads, refusals or null", () => {
    const actions: ReplayAction[] = [
      { name: "get_order_details", kwargs: { order_id: "#W1" }, write: false },
      { name: cancel.tool, kwargs: cancel.args, write: true },
      { name: "modify_pending_order_payment", kwargs: { order_id: "#W1", payment_method_id: "g" }, write: true },
      { name: "send_certificate", kwargs: { user_id: "u", amount: 1 }, write: true },
    ];
    const outputs = [
      "{...}",
      '{"order_id": "#W1"}',
      "Error: insufficient gift card balance to pay for the order",
      null,
    ];
    expect(expectedEffects(actions, outputs)).toEqual([cancel]);
  });
});

function run(
  agent: AgentRun["agent"],
  actions: Partial<AgentRun["actions"][number]>[],
  stopped: AgentRun["stopped"] = null,
): AgentRun {
  return {
    agent,
    taskId: "retail-train-1",
    stopped,
    actions: actions.map((a, index) => ({
      index,
      tool: "t",
      write: true,
      status: "SUCCEEDED",
      calls: 1,
      ambiguous: 0,
      ...a,
    })),
  };
}

describe("scoreTask and totalsOf", () => {
  it("scores by state hash and sums resolutions, queue items and silent failures", () => {
    const tri = scoreTask({
      run: run("tristate", [{ resolution: "found" }, { resolution: "absent_resent", calls: 1 }, {}]),
      oracleHash: "h",
      finalHash: "h",
      expected: [cancel],
      applied: [cancel],
      probeable: true,
    });
    expect(tri).toMatchObject({ matched: true, duplicates: 0, gaps: 0, resolutions: { found: 1, absent_resent: 1 } });
    const stuck = scoreTask({
      run: run("tristate", [{ status: "UNKNOWN", resolution: "needs_human", ambiguous: 1 }], {
        at: 0,
        reason: "needs_human",
      }),
      oracleHash: "h",
      finalHash: "x",
      expected: [cancel],
      applied: [],
      probeable: false,
      humanQueueItems: 1,
    });
    expect(stuck).toMatchObject({ matched: false, gaps: 1, reportedProblem: true, resolutions: { needs_human: 1 } });
    const silent = scoreTask({
      run: run("retry_any", [{ calls: 2, ambiguous: 1 }]),
      oracleHash: "h",
      finalHash: "x",
      expected: [cancel],
      applied: [cancel, cancel],
      probeable: true,
    });
    expect(silent).toMatchObject({
      matched: false,
      duplicates: 1,
      reportedProblem: false,
      writeCalls: 2,
      ambiguousCalls: 1,
    });

    const t = totalsOf("tristate", [tri, stuck, silent]);
    expect(t).toMatchObject({
      tasks: 2,
      matched: 1,
      probeableTasks: 1,
      probeableMatched: 1,
      humanQueueItems: 1,
      tasksInHumanQueue: 1,
      unmatchedNotQueued: 0,
      silentlyWrong: 0,
      resolutions: { found: 1, absent_resent: 1, needs_human: 1 },
    });
    expect(totalsOf("retry_any", [silent])).toMatchObject({
      duplicateEffects: 1,
      tasksWithDuplicates: 1,
      silentlyWrong: 1,
    });
  });
});

describe("status lies", () => {
  const cancelArgs = { ...cancel.args };
  const record = (status: string, args: Record<string, unknown> = cancelArgs, tool = `retail.${cancel.tool}`) => ({
    tool,
    args: { ...args, tenant: "retail-train-1" },
    status,
  });

  it("counts a final record SUCCEEDED whose effect the service's log does not have", () => {
    const claims = claimsOfRecords([record("SUCCEEDED")]);
    expect(claims).toEqual([{ tool: cancel.tool, args: cancelArgs, said: "effect" }]);
    expect(countStatusLies(claims, [])).toEqual({ succeededWithoutEffect: 1, noEffectButApplied: 0 });
    expect(countStatusLies(claims, [cancel])).toEqual(NO_STATUS_LIES);
  });

  it("counts a final record FAILED_NO_EFFECT whose effect the service's log has", () => {
    const claims = claimsOfRecords([record("FAILED_NO_EFFECT")]);
    expect(countStatusLies(claims, [cancel])).toEqual({ succeededWithoutEffect: 0, noEffectButApplied: 1 });
    expect(countStatusLies(claims, [])).toEqual(NO_STATUS_LIES);
  });

  it("never counts UNKNOWN or PENDING (a stated UNKNOWN), reads, or another write's effect", () => {
    const claims = claimsOfRecords([
      record("UNKNOWN"),
      record("PENDING"),
      record("SUCCEEDED", { order_id: "#W1" }, "retail.get_order_details"),
    ]);
    expect(claims).toEqual([]);
    // The log's effect is another order's: this SUCCEEDED has none of its own.
    const other = { tool: cancel.tool, args: { ...cancelArgs, order_id: "#W2" } };
    expect(countStatusLies(claimsOfRecords([record("SUCCEEDED")]), [other])).toMatchObject({
      succeededWithoutEffect: 1,
    });
  });

  it("pairs identical writes as multisets: a duplicate is not a lie, a refused repeat of an applied write is not one either", () => {
    const ok = claimsOfRecords([record("SUCCEEDED")]);
    // Applied twice, told once: a duplicate, counted by compareEffects, not a lie.
    expect(countStatusLies(ok, [cancel, cancel])).toEqual(NO_STATUS_LIES);
    // Step 1 cancelled the order, step 2 (the same call) was refused by the domain: both true.
    expect(countStatusLies(claimsOfRecords([record("SUCCEEDED"), record("FAILED_NO_EFFECT")]), [cancel])).toEqual(
      NO_STATUS_LIES,
    );
    // …but if step 1 was told FAILED_NO_EFFECT too, one of the two is a lie.
    expect(
      countStatusLies(claimsOfRecords([record("FAILED_NO_EFFECT"), record("FAILED_NO_EFFECT")]), [cancel]),
    ).toEqual({ succeededWithoutEffect: 0, noEffectButApplied: 1 });
  });

  it("reads a baseline's per-call reports: SUCCEEDED is an effect, FAILED or a refusal is none", () => {
    const actions: ReplayAction[] = [
      { name: cancel.tool, kwargs: cancel.args, write: true },
      { name: address.tool, kwargs: address.args, write: true },
      { name: "get_order_details", kwargs: { order_id: "#W1" }, write: false },
    ];
    // The cancel's answer was lost (504) after the work: "failed", yet the effect is there.
    // The address update was "SUCCEEDED" but nothing is in the log.
    const r = run("never_retry", [
      { tool: cancel.tool, status: "FAILED", error: "HTTP_504", ambiguous: 1 },
      { tool: address.tool, status: "SUCCEEDED" },
      { tool: "get_order_details", write: false, status: "SUCCEEDED" },
    ]);
    expect(claimsOfRun(r, actions)).toEqual([
      { tool: cancel.tool, args: cancel.args, said: "no_effect" },
      { tool: address.tool, args: address.args, said: "effect" },
    ]);
    const score = scoreTask({
      run: r,
      oracleHash: "h",
      finalHash: "x",
      expected: [cancel, address],
      applied: [cancel],
      probeable: true,
      claims: claimsOfRun(r, actions),
    });
    expect(score.statusLies).toEqual({ succeededWithoutEffect: 1, noEffectButApplied: 1 });
    // Gaps and silent failures count as before: one gap (the address), the agent saw a problem.
    expect(score).toMatchObject({ gaps: 1, duplicates: 0, reportedProblem: true });
    expect(totalsOf("never_retry", [score])).toMatchObject({
      statusLies: 2,
      statusLiesSucceededWithoutEffect: 1,
      statusLiesNoEffectButApplied: 1,
      tasksWithStatusLies: 1,
      gaps: 1,
      unmatchedNotQueued: 1,
      silentlyWrong: 0,
    });
  });

  it("leaves a score without claims at zero lies (Tristate's are filled in from its records)", () => {
    const score = scoreTask({
      run: run("tristate", [{}]),
      oracleHash: "h",
      finalHash: "h",
      expected: [cancel],
      applied: [],
      probeable: true,
    });
    expect(score.statusLies).toEqual(NO_STATUS_LIES);
    expect(totalsOf("tristate", [score])).toMatchObject({ statusLies: 0, tasksWithStatusLies: 0, gaps: 1 });
  });
});
