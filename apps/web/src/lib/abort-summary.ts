/**
 * An operator's reading of a run abort's report. The report's own `summary` is written for the agent
 * (what to tell its user; the executor's contract with the model), so the dashboard words the same
 * facts for an operator from the report's steps: what was reversed, what failed, what needs a person.
 */
import type { RouterOutputs } from "~/trpc/types";
import { countOf } from "./format";

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
  `${countOf(list.length, "step")} (${list.map((s) => `${s.stepId} ${s.tool}`).join(", ")})`;

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

/** A record of a run as far as aborting it goes (`runs.get`'s records). */
export interface RunRecordState {
  stepId: string;
  status: string;
  needsHuman: boolean;
}

/**
 * Why "Abort run" is not offered, or null when it is: once this tab's abort reported complete, or
 * when the run was already aborted (it has compensating or corrective steps) and nothing of it is in
 * flight, UNKNOWN or waiting for a person, there is nothing left for an abort to do.
 */
export function abortUnavailable(records: RunRecordState[], report?: { complete: boolean } | null): string | null {
  // This tab's abort decides: a report not complete (in flight, or for a person) may be aborted again.
  if (report) return report.complete ? "This run was aborted: nothing is left to undo." : null;
  const aborted = records.some((r) => r.stepId.startsWith("compensate:") || r.stepId.startsWith("correct:"));
  const unsettled = records.some((r) => r.needsHuman || r.status === "UNKNOWN" || r.status === "PENDING");
  if (aborted && !unsettled) return "This run was already aborted: nothing is left to undo.";
  return null;
}

/**
 * The run page's abort button: "Undo run…" when every step of a run not yet aborted has settled
 * (an abort then compensates every confirmed effect — rule 13's saga, intended), else "Abort run".
 */
export function abortLabel(records: RunRecordState[]): "Abort run" | "Undo run…" {
  const aborted = records.some((r) => r.stepId.startsWith("compensate:") || r.stepId.startsWith("correct:"));
  const settled = records.every((r) => !r.needsHuman && (r.status === "SUCCEEDED" || r.status === "FAILED_NO_EFFECT"));
  return records.length > 0 && settled && !aborted ? "Undo run…" : "Abort run";
}
