/**
 * An operator's reading of a run abort's report. The report's own `summary` is written for the agent
 * (what to tell its user; the executor's contract with the model), so the dashboard words the same
 * facts for an operator from the report's steps: what was reversed, what failed, what needs a person.
 */
import type { RouterOutputs } from "~/trpc/types";

/** The saga's step outcomes (`StepOutcome` in @tristate/core). */
export type StepOutcome = RouterOutputs["runs"]["operatorAbort"]["steps"][number]["outcome"];

/**
 * A step of an abort report (`runs.operatorAbort`, or an `abort_run` audit entry, whose stored
 * outcome is a plain string).
 */
export interface AbortStep {
  stepId: string;
  tool: string;
  outcome: StepOutcome | (string & {});
}

/** What an operator does about a step's outcome; every outcome of the saga has exactly one. */
export type AbortGroup = "reversed" | "failed" | "needs_person" | "no_effect" | "left" | "in_flight";

/**
 * The group of a step's outcome (every `StepOutcome`); an outcome this dashboard does not know (a
 * newer executor's, read from the audit log) is one a person should look at.
 */
export function abortGroup(outcome: AbortStep["outcome"]): AbortGroup {
  switch (outcome as StepOutcome) {
    case "compensated":
    case "corrected":
      return "reversed";
    case "compensation_failed":
      return "failed";
    case "not_confirmed":
    case "needs_correction":
    case "compensation_unknown":
      return "needs_person";
    case "no_effect":
      return "no_effect";
    case "no_compensation":
      return "left";
    case "in_flight":
      return "in_flight";
    default:
      return "needs_person";
  }
}

const steps = (list: AbortStep[]) =>
  `${list.length} step${list.length === 1 ? "" : "s"} (${list.map((s) => `${s.stepId} ${s.tool}`).join(", ")})`;

/**
 * The report in an operator's words, one sentence per kind of outcome, e.g. "Reversed: 2 steps
 * (s1 issue_refund, s2 issue_refund). Nothing failed. Nothing needs a person." Always says whether
 * anything was reversed, failed or needs a person, so "nothing" is stated rather than implied.
 */
export function operatorAbortSummary(report: { steps: AbortStep[] }): string {
  const by = (group: AbortGroup) => report.steps.filter((s) => abortGroup(s.outcome) === group);
  const reversed = by("reversed");
  const failed = by("failed");
  const person = [...failed, ...by("needs_person")];
  const sentences = [
    reversed.length ? `Reversed: ${steps(reversed)}.` : "Nothing was reversed.",
    failed.length ? `Compensation failed: ${steps(failed)}.` : "Nothing failed.",
    person.length ? `Needs a person (in the human queue): ${steps(person)}.` : "Nothing needs a person.",
  ];
  const noEffect = by("no_effect");
  if (noEffect.length) sentences.push(`Had no effect, nothing to undo: ${steps(noEffect)}.`);
  const left = by("left");
  if (left.length) sentences.push(`Left as is (the tool declares no compensation): ${steps(left)}.`);
  const inFlight = by("in_flight");
  if (inFlight.length) sentences.push(`Still in flight: ${steps(inFlight)}; abort again once they settle.`);
  if (!report.steps.length) sentences.unshift("The run had no steps to undo.");
  return sentences.join(" ");
}
