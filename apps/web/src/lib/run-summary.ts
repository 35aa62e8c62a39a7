/**
 * Runs as the runs page shows them: the executor's `runs.list` summaries (status, start, duration,
 * tools, steps, UNKNOWN and human-queue counts), and the words for their statuses.
 */
import type { RouterOutputs } from "~/trpc/types";

/** One run of `runs.list` (times epoch ms, durations ms). */
export type RunSummary = RouterOutputs["runs"]["list"]["items"][number];

/**
 * A run's state (see `RunStatus` in @tristate/db): needs attention (an UNKNOWN or a record in the
 * human queue) > open (a call in flight) > aborted (compensated, or aborted by an operator) > open
 * (a planned step not done) > completed.
 */
export type RunStatus = RunSummary["status"];

/** Every run status, in the order of the filter. */
export const RUN_STATUSES: readonly RunStatus[] = ["open", "completed", "aborted", "needs_attention"];

/** True for a run status (e.g. the URL's `status`). */
export function isRunStatus(value: string | undefined): value is RunStatus {
  return value !== undefined && (RUN_STATUSES as readonly string[]).includes(value);
}

/** The words for a run status. */
export function runStatusLabel(status: RunStatus): string {
  switch (status) {
    case "open":
      return "open";
    case "completed":
      return "completed";
    case "aborted":
      return "aborted";
    case "needs_attention":
      return "needs a person or reconciling";
  }
}

/**
 * A run's status in the runs list, in the run page's badge words: a run that needs attention "needs a
 * person" while a record of it waits in the human queue, else it is "reconciling" an UNKNOWN.
 */
export function runRowStatusLabel(run: Pick<RunSummary, "status" | "needsHumanCount">): string {
  if (run.status !== "needs_attention") return runStatusLabel(run.status);
  return run.needsHumanCount > 0 ? "needs a person" : "reconciling";
}

/** A run's duration as the runs page shows it: "–" for a run with no call yet (only a declared plan). */
export function runDurationLabel(
  run: Pick<RunSummary, "steps" | "durationMs">,
  format: (ms: number) => string,
): string {
  return run.steps === 0 ? "–" : format(run.durationMs);
}

/** A run with no call yet, as its declared plan says: "plan: 3 steps" and its distinct tools in order. */
export function plannedSteps(plan: { steps: { tool: string }[] } | null | undefined): {
  label: string;
  tools: string[];
} {
  if (!plan) return { label: "no call yet", tools: [] };
  const n = plan.steps.length;
  return { label: `plan: ${n} step${n === 1 ? "" : "s"}`, tools: [...new Set(plan.steps.map((s) => s.tool))] };
}
