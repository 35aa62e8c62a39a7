/**
 * A run as the runs page lists it, summarised from its intent records (pure; the executor has no
 * list of runs yet, so the page groups the newest records by run).
 */

/** A run's state: open (a call in flight), completed, aborted (compensated), or needs attention (UNKNOWN or a person). */
export type RunStatus = "open" | "completed" | "aborted" | "needs_attention";

/** Every run status, in the order of the filter. */
export const RUN_STATUSES: readonly RunStatus[] = ["open", "completed", "aborted", "needs_attention"];

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
      return "needs attention";
  }
}

/** What the summary reads of a record. */
export interface RunRecord {
  runId: string;
  tenant: string;
  stepId: string;
  tool: string;
  status: "PENDING" | "SUCCEEDED" | "FAILED_NO_EFFECT" | "UNKNOWN";
  resolution: string | null;
  needsHuman: boolean;
  createdAtEpochMs: number;
  updatedAtEpochMs: number;
  finishedAtEpochMs: number | null;
}

/** One run of the list. */
export interface RunSummary {
  runId: string;
  tenant: string;
  status: RunStatus;
  startedAtEpochMs: number;
  /** From the first record's creation to the last record's end (or last update while open), ms. */
  durationMs: number;
  tools: string[];
  steps: number;
  /** Records that were UNKNOWN at some point (still UNKNOWN, or resolved from UNKNOWN). */
  unknownCount: number;
}

/** Steps the saga adds when a run is aborted (`compensate:…`, `correct:…`). */
function isCompensationStep(stepId: string): boolean {
  return stepId.startsWith("compensate:") || stepId.startsWith("correct:");
}

/** The status of a run with these records (needs attention > open > aborted > completed). */
export function runStatusOf(records: readonly RunRecord[]): RunStatus {
  if (records.some((r) => r.needsHuman || r.status === "UNKNOWN")) return "needs_attention";
  if (records.some((r) => r.status === "PENDING")) return "open";
  if (records.some((r) => isCompensationStep(r.stepId))) return "aborted";
  return "completed";
}

/** Groups records by run (and tenant) into summaries, newest start first. */
export function summariseRuns(records: readonly RunRecord[]): RunSummary[] {
  const groups = new Map<string, RunRecord[]>();
  for (const r of records) {
    const id = `${r.tenant}\u0000${r.runId}`;
    const list = groups.get(id);
    if (list) list.push(r);
    else groups.set(id, [r]);
  }
  const runs: RunSummary[] = [];
  for (const list of groups.values()) {
    const first = list[0] as RunRecord;
    const start = Math.min(...list.map((r) => r.createdAtEpochMs));
    const end = Math.max(...list.map((r) => r.finishedAtEpochMs ?? r.updatedAtEpochMs));
    runs.push({
      runId: first.runId,
      tenant: first.tenant,
      status: runStatusOf(list),
      startedAtEpochMs: start,
      durationMs: Math.max(0, end - start),
      tools: [...new Set(list.map((r) => r.tool))].sort(),
      steps: list.length,
      unknownCount: list.filter((r) => r.status === "UNKNOWN" || r.resolution !== null).length,
    });
  }
  return runs.sort((a, b) => b.startedAtEpochMs - a.startedAtEpochMs);
}
