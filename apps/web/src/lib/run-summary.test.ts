import { describe, expect, it } from "vitest";
import {
  isRunStatus,
  plannedSteps,
  RUN_STATUSES,
  runDurationLabel,
  runRowStatusLabel,
  runStatusLabel,
} from "./run-summary";

describe("run statuses", () => {
  it("every status has words; only the four are statuses", () => {
    expect(RUN_STATUSES.map(runStatusLabel)).toEqual(["open", "completed", "aborted", "needs a person or reconciling"]);
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

describe("runRowStatusLabel (issue 22: the runs list and the run page's badge use one term)", () => {
  it("a run needing attention needs a person while a record waits for one, else it is reconciling", () => {
    expect(runRowStatusLabel({ status: "needs_attention", needsHumanCount: 2 })).toBe("needs a person");
    expect(runRowStatusLabel({ status: "needs_attention", needsHumanCount: 0 })).toBe("reconciling");
    expect(runRowStatusLabel({ status: "completed", needsHumanCount: 0 })).toBe("completed");
  });
});
