import { describe, expect, it } from "vitest";
import { isRunStatus, RUN_STATUSES, runStatusLabel } from "./run-summary";

describe("run statuses", () => {
  it("every status has words; only the four are statuses", () => {
    expect(RUN_STATUSES.map(runStatusLabel)).toEqual(["open", "completed", "aborted", "needs attention"]);
    expect(isRunStatus("needs_attention")).toBe(true);
    expect(isRunStatus("stuck")).toBe(false);
    expect(isRunStatus(undefined)).toBe(false);
  });
});
