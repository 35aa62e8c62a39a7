import { describe, expect, it } from "vitest";
import { abortGroup, abortLabel, abortUnavailable, operatorAbortSummary } from "./abort-summary";
import { countOf } from "./format";

describe("operatorAbortSummary (issue 14: the agent's wording was shown to operators)", () => {
  it("says what was reversed, what failed and what needs a person", () => {
    const text = operatorAbortSummary({
      steps: [
        { stepId: "s1", tool: "issue_refund", outcome: "compensated" },
        { stepId: "s2", tool: "ship", outcome: "compensation_failed" },
        { stepId: "s3", tool: "charge", outcome: "not_confirmed" },
        { stepId: "s4", tool: "email", outcome: "no_effect" },
      ],
    });
    expect(text).toBe(
      "Reversed: 1 step (s1 issue_refund). Compensation failed: 1 step (s2 ship). " +
        "Needs a person (in the human queue): 2 steps (s2 ship, s3 charge). Had no effect, nothing to undo: 1 step (s4 email).",
    );
  });

  it("nothing reversed is said as such, never addressed to an agent's user, no double spaces", () => {
    const text = operatorAbortSummary({ steps: [{ stepId: "s1", tool: "issue_refund", outcome: "no_effect" }] });
    expect(text).toMatch(/^Nothing was reversed\. Nothing failed\. Nothing needs a person\./);
    expect(text).not.toMatch(/tell the user| {2}/);
    expect(operatorAbortSummary({ steps: [] })).toBe(
      "The run had no steps to undo. Nothing was reversed. Nothing failed. Nothing needs a person.",
    );
  });

  it("every outcome of the saga has a group", () => {
    const outcomes = [
      "compensated",
      "corrected",
      "no_effect",
      "not_confirmed",
      "in_flight",
      "no_compensation",
      "needs_correction",
      "compensation_failed",
      "compensation_unknown",
    ] as const;
    expect(outcomes.map(abortGroup)).toEqual([
      "reversed",
      "reversed",
      "no_effect",
      "needs_person",
      "in_flight",
      "left",
      "needs_person",
      "failed",
      "needs_person",
    ]);
  });
});

describe("abortUnavailable (review: 'Abort run' stayed offered after the abort)", () => {
  const original = { stepId: "step-1", status: "SUCCEEDED", needsHuman: false };
  const reversal = { stepId: "compensate:abc", status: "SUCCEEDED", needsHuman: false };
  it("offers the abort of a run never aborted, and again while something of an aborted run is unsettled", () => {
    expect(abortUnavailable([original])).toBeNull();
    expect(abortUnavailable([{ ...original, needsHuman: true }, reversal])).toBeNull();
    expect(abortUnavailable([original, reversal], { complete: false })).toBeNull();
  });
  it("not once the abort is complete or the run was aborted with nothing left", () => {
    expect(abortUnavailable([original], { complete: true })).toMatch(/aborted/);
    expect(abortUnavailable([original, reversal])).toMatch(/already aborted/);
    expect(abortUnavailable([original, { ...reversal, stepId: "correct:abc" }])).toMatch(/already aborted/);
  });
});

describe("countOf", () => {
  it("says 1 step, 2 steps, 0 steps", () => {
    expect([0, 1, 2].map((n) => countOf(n, "step"))).toEqual(["0 steps", "1 step", "2 steps"]);
    expect(countOf(1, "call")).toBe("1 call");
  });
});

describe("abortLabel (issue 22: 'Abort run' was offered on a completed run)", () => {
  const step = (status: string, stepId = "s1", needsHuman = false) => ({ stepId, status, needsHuman });
  it("a run whose every step settled is undone, not aborted; one in flight or waiting is aborted", () => {
    expect(abortLabel([step("SUCCEEDED"), step("FAILED_NO_EFFECT", "s2")])).toBe("Undo run…");
    expect(abortLabel([step("SUCCEEDED"), step("PENDING", "s2")])).toBe("Abort run");
    expect(abortLabel([step("UNKNOWN", "s1", true)])).toBe("Abort run");
    expect(abortLabel([step("SUCCEEDED"), step("SUCCEEDED", "compensate:s1")])).toBe("Abort run");
    expect(abortLabel([])).toBe("Abort run");
  });
});
