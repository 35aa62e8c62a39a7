/**
 * What happened to each step of a run, as the run page shows it: a run's records (`runs.get`) read
 * as steps — a compensating or corrective call (`compensate:<key>` / `correct:<key>`) is never a step
 * of its own but the undo of its original — and the state of each step and of the run.
 */
import type { IntentStatus } from "~/trpc/types";

/** Step-id prefixes of compensating and corrective calls (`COMPENSATE_STEP_PREFIX` … in @tristate/core). */
const UNDO_PREFIXES = ["compensate:", "correct:"] as const;

/** The fields of a record (`runs.get`'s records) the states are read from. */
export interface StepRecord {
  key: string;
  stepId: string;
  status: IntentStatus;
  needsHuman: boolean;
  /** The compensation noted on the record: `status` once an abort or an operator ran it. */
  compensation: { kind: string; status?: IntentStatus | undefined } | null;
}

/**
 * What happened to one step:
 * - `done`: SUCCEEDED, its effect stands;
 * - `no_effect`: FAILED_NO_EFFECT, nothing happened at the remote;
 * - `in_flight`: PENDING (being sent) or UNKNOWN (being reconciled by the sweeper);
 * - `needs_person`: waiting for a person (the human queue), the step or its undo;
 * - `undoing`: its compensation (or corrective call) is in flight;
 * - `compensated` / `corrected`: its compensation (corrective call) SUCCEEDED: the effect was undone;
 * - `compensation_failed`: its compensation ended FAILED_NO_EFFECT: the effect still stands.
 */
export type StepState =
  | "done"
  | "no_effect"
  | "in_flight"
  | "needs_person"
  | "undoing"
  | "compensated"
  | "corrected"
  | "compensation_failed";

/** How a state is shown: a badge's icon, words and colour class (never colour alone), and a longer why. */
export interface StateLook {
  icon: string;
  label: string;
  /** The badge's colour: one per state (`state-<tone>` in the run page's styles). */
  tone: string;
}

/** One step: its record, the record of the call that undoes it (if any), and its state in words. */
export interface Step<R extends StepRecord> {
  record: R;
  /** The compensating or corrective call's record (the latest when there are several), or null. */
  undo: R | null;
  state: StepState;
  /** A short sentence on why the step is in its state (e.g. "UNKNOWN: being reconciled"). */
  detail: string;
}

/** The key of the record a compensating or corrective step undoes, or null for an ordinary step. */
export function undoneKey(stepId: string): string | null {
  for (const prefix of UNDO_PREFIXES) if (stepId.startsWith(prefix)) return stepId.slice(prefix.length);
  return null;
}

function inFlightWords(status: IntentStatus): string {
  return status === "UNKNOWN" ? "UNKNOWN: being reconciled" : "PENDING: being sent";
}

/**
 * The state of one step from its record and the record of its undo (null when none was called).
 * The undo's own record decides over the status noted on the original (noted when it was called); a
 * noted run without a record (refused before it was written, or past the page's 1000 records) counts.
 */
export function stepState(record: StepRecord, undo: StepRecord | null): { state: StepState; detail: string } {
  const corrective = record.compensation?.kind === "corrective";
  const undoStatus = undo?.status ?? record.compensation?.status;
  if (undoStatus !== undefined) {
    const what = corrective ? "corrective call" : "compensation";
    if (undo?.needsHuman) return { state: "needs_person", detail: `its ${what} waits for a person` };
    switch (undoStatus) {
      case "SUCCEEDED":
        return corrective
          ? { state: "corrected", detail: "its effect was corrected" }
          : { state: "compensated", detail: "its effect was undone" };
      case "FAILED_NO_EFFECT":
        return {
          state: "compensation_failed",
          detail: `its ${what} had no effect: the effect stands${record.needsHuman ? "; waiting for a person" : ""}`,
        };
      case "PENDING":
      case "UNKNOWN":
        return { state: "undoing", detail: `its ${what} is in flight (${inFlightWords(undoStatus)})` };
    }
  }
  if (record.needsHuman) return { state: "needs_person", detail: `${record.status}: in the human queue` };
  switch (record.status) {
    case "PENDING":
    case "UNKNOWN":
      return { state: "in_flight", detail: inFlightWords(record.status) };
    case "FAILED_NO_EFFECT":
      return { state: "no_effect", detail: "failed before any effect" };
    case "SUCCEEDED":
      return { state: "done", detail: "succeeded; its effect stands" };
  }
}

/** The badge of a step state. */
export function stepStateLook(state: StepState): StateLook {
  switch (state) {
    case "done":
      return { icon: "✓", label: "done", tone: "ok" };
    case "no_effect":
      return { icon: "∅", label: "no effect", tone: "none" };
    case "in_flight":
      return { icon: "…", label: "in flight", tone: "flight" };
    case "needs_person":
      return { icon: "!", label: "waiting for a person", tone: "person" };
    case "undoing":
      return { icon: "↺", label: "compensation in flight", tone: "flight" };
    case "compensated":
      return { icon: "↩", label: "compensated", tone: "undone" };
    case "corrected":
      return { icon: "↩", label: "corrected", tone: "undone" };
    case "compensation_failed":
      return { icon: "✕", label: "compensation failed", tone: "bad" };
  }
}

/**
 * A run's records as steps, in the order of the records: each compensating or corrective record is
 * put under the step it undoes (the latest such record wins). One whose original is not among the
 * records (past the page's limit) is shown as a step of its own.
 */
export function runSteps<R extends StepRecord>(records: readonly R[]): Step<R>[] {
  const originals = new Set(records.filter((r) => undoneKey(r.stepId) === null).map((r) => r.key));
  const undoOf = new Map<string, R>();
  for (const r of records) {
    const of = undoneKey(r.stepId);
    if (of !== null && originals.has(of)) undoOf.set(of, r);
  }
  return records.flatMap((record) => {
    const of = undoneKey(record.stepId);
    if (of !== null && originals.has(of)) return [];
    const undo = undoOf.get(record.key) ?? null;
    return [{ record, undo, ...stepState(record, undo) }];
  });
}
