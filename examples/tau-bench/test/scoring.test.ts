/** Scoring: duplicates and gaps from the effect log against the ground truth, totals. */
import { describe, expect, it } from "vitest";
import type { AgentRun, ReplayAction } from "../src/replay/agents.ts";
import { compareEffects, expectedEffects, scoreTask, totalsOf } from "../src/replay/scoring.ts";

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
