/**
 * A run's abort as `runs.get` and the run page show it (DESIGN.md rule 13): who aborted it, when and
 * why, and its steps in three groups — undone, waiting for steps still in flight (undone when they
 * settle), waiting for a person.
 */
import {
  COMPENSATE_STEP_PREFIX,
  CORRECT_STEP_PREFIX,
  isCompensationStep,
  RUN_ABORT_VIAS,
  type RunAbortVia,
} from "@tristate/core";
import type { IntentSummary } from "./intent-view.ts";

/** A run's abort and where each of its steps stands. Times epoch ms. */
export interface RunAbortView {
  /** When the first abort was recorded, by the database's clock. */
  abortedAtEpochMs: number;
  /** The key name of whoever aborted it (an agent's or an operator's), "executor" for code embedding it. */
  actorName: string;
  via: RunAbortVia;
  /** Why, as given ("" when not). */
  reason: string;
  /** Keys of steps whose effect was reversed or corrected. */
  undone: string[];
  /**
   * Keys of steps still in flight — the call, or its compensation, not settled yet, or a settled
   * effect whose undo has not run yet: each is undone when it settles, without another abort.
   */
  inFlight: string[];
  /** Keys of steps waiting for a person (the human queue): not confirmed, irreversible, or their undo failed. */
  waitingForPerson: string[];
  /** True when nothing is in flight and nothing waits for a person. */
  complete: boolean;
}

/** A `run_aborts` row as Prisma's typed client returns it. */
export interface RunAbortRowView {
  abortedAt: Date;
  actorName: string;
  via: string;
  reason: string;
}

type Group = "undone" | "inFlight" | "waitingForPerson" | null;

/** Where one original step stands, given the run's records by step id. */
function groupOf(record: IntentSummary, byStep: ReadonlyMap<string, IntentSummary>): Group {
  if (record.needsHuman) return "waitingForPerson";
  switch (record.status) {
    case "PENDING":
    case "UNKNOWN":
      return "inFlight";
    case "FAILED_NO_EFFECT":
      return null;
    case "SUCCEEDED":
      break;
  }
  const undo =
    byStep.get(`${COMPENSATE_STEP_PREFIX}${record.key}`) ?? byStep.get(`${CORRECT_STEP_PREFIX}${record.key}`);
  if (!undo) return record.compensation ? "inFlight" : null; // registered, not called yet: under way
  if (undo.needsHuman) return "waitingForPerson";
  switch (undo.status) {
    case "SUCCEEDED":
      return "undone";
    case "PENDING":
    case "UNKNOWN":
      return "inFlight";
    case "FAILED_NO_EFFECT":
      return "waitingForPerson";
  }
}

/**
 * The view of a run's abort over its records (compensation steps are read as the undo of their
 * original, never listed themselves).
 * @throws TypeError for a `via` the executor never writes.
 */
export function runAbortView(row: RunAbortRowView, records: readonly IntentSummary[]): RunAbortView {
  const via = RUN_ABORT_VIAS.find((v) => v === row.via);
  if (!via) throw new TypeError(`run_aborts: via "${row.via}" is not one of ${RUN_ABORT_VIAS.join(", ")}`);
  const byStep = new Map(records.map((r) => [r.stepId, r] as const));
  const view: RunAbortView = {
    abortedAtEpochMs: row.abortedAt.getTime(),
    actorName: row.actorName,
    via,
    reason: row.reason,
    undone: [],
    inFlight: [],
    waitingForPerson: [],
    complete: false,
  };
  for (const record of records) {
    if (isCompensationStep(record.stepId)) continue;
    const group = groupOf(record, byStep);
    if (group) view[group].push(record.key);
  }
  view.complete = view.inFlight.length === 0 && view.waitingForPerson.length === 0;
  return view;
}
