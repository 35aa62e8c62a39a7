import { describe, expect, it } from "vitest";
import { isRunStatus, plannedSteps, RUN_STATUSES, runDurationLabel, runStatusLabel } from "./run-summary";

describe("run statuses", () => {
  it("every status has words; only the four are statuses", () => {
    expect(RUN_STATUSES.map(runStatusLabel)).toEqual(["open", "completed", "aborted", "needs attention"]);
    expect(isRunStatus("needs_attention")).toBe(true);
    expect(isRunStatus("stuck")).toBe(false);
    expect(isRunStatus(undefined)).toBe(false);
  });
});

describe("a run with only a declared plan (review: '0 ms', 0 steps, no tools)", () => {
  const ms = (n: number) => `${n} ms`;
  it("has no duration yet", () => {
    expect(runDurationLabel({ steps: 0, durationMs: 0 }, ms)).toBe("–");
    expect(runDurationLabel({ steps: 2, durationMs: 0 }, ms)).toBe("0 ms");
  });
  it("shows its plan's step count and tools", () => {
    const plan = { steps: [{ tool: "charge" }, { tool: "ship" }, { tool: "charge" }] };
    expect(plannedSteps(plan)).toEqual({ label: "plan: 3 steps", tools: ["charge", "ship"] });
    expect(plannedSteps({ steps: [{ tool: "charge" }] }).label).toBe("plan: 1 step");
    expect(plannedSteps(null)).toEqual({ label: "no call yet", tools: [] });
  });
});
