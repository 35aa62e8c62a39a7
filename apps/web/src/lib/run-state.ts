/**
 * A run's own state as the run page's badge shows it, read from `runs.get` (its records, declared
 * plan and abort). It refines the runs list's status (`runs.list`, `RunStatus` in @tristate/db):
 * "needs attention" is told apart as waiting for a person or reconciling an UNKNOWN, and an abort
 * still under way ("aborting") from one that is complete.
 */
import type { StateLook, StepRecord } from "./step-state";
import { undoneKey } from "./step-state";

/**
 * The state of a run, checked in this order:
 * - `needs_person`: a record of it (a step or an undo) waits for a person, or its abort does;
 * - `aborting`: it was aborted and the abort is not complete (a step or its undo still in flight);
 * - `reconciling`: a record is UNKNOWN, the sweeper reconciling it;
 * - `running`: a record is PENDING (a call in flight);
 * - `aborted`: it was aborted (complete), or a step of it was compensated or corrected;
 * - `open`: a step of its declared plan has no settled record yet (the agent has not finished it);
 * - `completed`: every record settled, every planned step done.
 */
export type RunState = "needs_person" | "aborting" | "reconciling" | "running" | "aborted" | "open" | "completed";

/** What of `runs.get` the run state is read from. */
export interface RunStateInput {
  records: readonly (StepRecord & { tool: string })[];
  plan: { steps: readonly { stepId: string; tool: string }[] } | null;
  abort: { complete: boolean; waitingForPerson: readonly string[] } | null;
}

/** The state of a run (see {@link RunState}). */
export function runState({ records, plan, abort }: RunStateInput): RunState {
  if (records.some((r) => r.needsHuman) || (abort?.waitingForPerson.length ?? 0) > 0) return "needs_person";
  if (abort && !abort.complete) return "aborting";
  if (records.some((r) => r.status === "UNKNOWN")) return "reconciling";
  if (records.some((r) => r.status === "PENDING")) return "running";
  if (abort || records.some((r) => undoneKey(r.stepId) !== null)) return "aborted";
  const settled = (step: { stepId: string; tool: string }) =>
    records.some(
      (r) =>
        r.stepId === step.stepId &&
        r.tool === step.tool &&
        (r.status === "SUCCEEDED" || r.status === "FAILED_NO_EFFECT"),
    );
  if (plan?.steps.some((step) => !settled(step))) return "open";
  return "completed";
}

/** The badge of a run state, and a sentence saying what it means for an operator. */
export function runStateLook(state: RunState): StateLook & { meaning: string } {
  switch (state) {
    case "needs_person":
      return {
        icon: "!",
        label: "needs a person",
        tone: "person",
        meaning: "a step or its undo waits in the human queue",
      };
    case "aborting":
      return {
        icon: "↺",
        label: "aborting",
        tone: "flight",
        meaning: "aborted; steps still in flight are undone when they settle",
      };
    case "reconciling":
      return {
        icon: "?",
        label: "reconciling",
        tone: "warn",
        meaning: "a step is UNKNOWN; the sweeper is reconciling it",
      };
    case "running":
      return { icon: "…", label: "running", tone: "flight", meaning: "a call is in flight" };
    case "aborted":
      return { icon: "↩", label: "aborted", tone: "undone", meaning: "aborted; nothing is left to undo" };
    case "open":
      return { icon: "○", label: "open", tone: "none", meaning: "a step of its declared plan is not done yet" };
    case "completed":
      return { icon: "✓", label: "completed", tone: "ok", meaning: "every step settled" };
  }
}
