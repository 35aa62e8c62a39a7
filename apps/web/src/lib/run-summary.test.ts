import { describe, expect, it } from "vitest";
import { type RunRecord, runStatusOf, summariseRuns } from "./run-summary";

const rec = (over: Partial<RunRecord>): RunRecord => ({
  runId: "r1",
  tenant: "default",
  stepId: "s1",
  tool: "refund",
  status: "SUCCEEDED",
  resolution: null,
  needsHuman: false,
  createdAtEpochMs: 1_000,
  updatedAtEpochMs: 1_500,
  finishedAtEpochMs: 1_500,
  ...over,
});

describe("runs summarised from their records", () => {
  it("derives open / completed / aborted / needs attention", () => {
    expect(runStatusOf([rec({})])).toBe("completed");
    expect(runStatusOf([rec({}), rec({ status: "PENDING", finishedAtEpochMs: null })])).toBe("open");
    expect(runStatusOf([rec({}), rec({ stepId: "compensate:s1", tool: "reverse" })])).toBe("aborted");
    expect(runStatusOf([rec({ status: "UNKNOWN", resolution: "needs_human", needsHuman: true })])).toBe(
      "needs_attention",
    );
  });

  it("counts UNKNOWNs (resolved ones too), tools, duration; newest run first", () => {
    const runs = summariseRuns([
      rec({ stepId: "s1", resolution: "found" }),
      rec({ stepId: "s2", tool: "email", createdAtEpochMs: 2_000, finishedAtEpochMs: 4_000 }),
      rec({ runId: "r2", createdAtEpochMs: 9_000, updatedAtEpochMs: 9_100, finishedAtEpochMs: 9_100 }),
    ]);
    expect(runs.map((r) => r.runId)).toEqual(["r2", "r1"]);
    expect(runs[1]).toMatchObject({ steps: 2, tools: ["email", "refund"], unknownCount: 1, durationMs: 3_000 });
  });
});
