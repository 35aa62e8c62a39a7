/**
 * What "correct" means for an aborted run (issue 20 §1, DESIGN.md rule 13), judged from the remote's
 * effect log — never from the executor's own view — once the system has settled:
 *
 * - every confirmed effect of a tool that declares a compensation is **reversed** (its reversal is in
 *   the log) or **handed to a person** (a record of that step, or of its compensation, waits in the
 *   human queue); otherwise it is **unreversed** (a violation);
 * - nothing is **done after the abort**: an effect of a step whose first call began after the abort
 *   was answered must not exist unless it was reversed or handed to a person (a new step of an aborted
 *   run is refused before sending); otherwise a violation;
 * - an effect of a tool without a declared compensation whose call was in flight when the run was
 *   aborted **stays** (`kept`): not a gap, as long as the run's final records tell it (SUCCEEDED; the
 *   status-lie check covers that).
 *
 * Used by the τ-bench replay (`--abort-share`) and the crash campaign (`pnpm chaos`, faults `abort`
 * and `abortrace`).
 */
import canonicalize from "canonicalize";
import { kwargsOf } from "../catalog/tools.ts";
import type { ReplayAction } from "./agents.ts";

/** An effect from the service's log (`GET /<d>/effects`), with the changed record when it returned one. */
export interface LoggedEffect {
  /** The tool without its domain (`book_reservation`). */
  tool: string;
  /** Its keyword arguments (no `tenant`). */
  args: unknown;
  /** The changed record (a booking's reservation). */
  record?: unknown;
}

/** An intent record of the run, as the scorer needs it. */
export interface AbortRecordView {
  key: string;
  stepId: string;
  /** `<domain>.<tool>`. */
  tool: string;
  /** The persisted arguments (with `tenant`). */
  args: unknown;
  status: string;
  /** The record waits in the human queue. */
  needsHuman: boolean;
}

/** The reversal a tool's compensation sends at the remote, per `<domain>.<tool>` of the τ-bench catalog. */
export const REVERSALS: Readonly<Record<string, (e: LoggedEffect) => LoggedEffect | null>> = {
  "airline.book_reservation": (e) => {
    const id = (e.record as { reservation_id?: unknown } | undefined)?.reservation_id;
    return typeof id === "string" ? { tool: "cancel_reservation", args: { reservation_id: id } } : null;
  },
};

/** Everything needed to judge one aborted run. */
export interface AbortedRunInput {
  domain: string;
  /** The plan (the task's actions, step `a<i>` = action i). */
  actions: readonly ReplayAction[];
  /** Per action: when its first call began, epoch ms (`null`: never called). */
  firstCallAt: readonly (number | null)[];
  /** When the abort was answered, epoch ms. */
  abortAnsweredAt: number;
  records: readonly AbortRecordView[];
  /** The instance's whole effect log (lagged effects included). */
  effects: readonly LoggedEffect[];
}

/** The judgement of one aborted run. */
export interface AbortScore {
  /** Confirmed effects with a declared compensation whose reversal is at the remote. */
  reversed: number;
  /** Confirmed effects with a declared compensation, not reversed, whose step waits for a person. */
  handedToPerson: number;
  /** Effects of tools without a compensation, in flight at the abort: they stay (and the records say so). */
  kept: number;
  /** Violation: a compensable effect neither reversed nor in the human queue. */
  unreversed: number;
  /** Violation: an effect of a step first called after the abort was answered, neither reversed nor queued. */
  doneAfterAbort: number;
  /** One line per violation. */
  details: string[];
}

const sig = (tool: string, args: unknown) => `${tool} ${canonicalize(args) ?? "null"}`;

function kwargs(args: unknown): unknown {
  return typeof args === "object" && args !== null ? kwargsOf(args as Record<string, unknown>) : args;
}

/** True when a record of this effect's step (or of its compensation) waits for a person. */
function personAsked(input: AbortedRunInput, effect: LoggedEffect): boolean {
  const mine = sig(`${input.domain}.${effect.tool}`, effect.args);
  const originals = input.records.filter((r) => sig(r.tool, kwargs(r.args)) === mine);
  return originals.some(
    (o) => o.needsHuman || input.records.some((r) => r.needsHuman && r.stepId.endsWith(`:${o.key}`)),
  );
}

/** Index of the first write action of the plan that matches the effect and is not yet taken. */
function stepOf(input: AbortedRunInput, effect: LoggedEffect, taken: Set<number>): number | null {
  const mine = sig(effect.tool, effect.args);
  for (const [i, a] of input.actions.entries()) {
    if (a.write && !taken.has(i) && sig(a.name, a.kwargs) === mine) {
      taken.add(i);
      return i;
    }
  }
  return null;
}

/**
 * Judges an aborted run from the remote's effect log and the run's records; see the module's header.
 * A reversal effect is matched to one compensable effect only (multiset).
 */
export function scoreAbortedRun(input: AbortedRunInput): AbortScore {
  const score: AbortScore = { reversed: 0, handedToPerson: 0, kept: 0, unreversed: 0, doneAfterAbort: 0, details: [] };
  const pool = new Map<string, number>();
  for (const e of input.effects) pool.set(sig(e.tool, e.args), (pool.get(sig(e.tool, e.args)) ?? 0) + 1);
  const take = (e: LoggedEffect): boolean => {
    const n = pool.get(sig(e.tool, e.args)) ?? 0;
    if (n > 0) pool.set(sig(e.tool, e.args), n - 1);
    return n > 0;
  };
  const taken = new Set<number>();
  for (const e of input.effects) {
    const step = stepOf(input, e, taken);
    const reversalOf = REVERSALS[`${input.domain}.${e.tool}`];
    const where = `${e.tool} ${canonicalize(e.args)}${step === null ? "" : ` (step a${step})`}`;
    if (reversalOf) {
      const reversal = reversalOf(e);
      if (reversal && take(reversal)) score.reversed++;
      else if (personAsked(input, e)) score.handedToPerson++;
      else {
        score.unreversed++;
        score.details.push(`aborted run holds an unreversed effect: ${where}, nothing in the human queue`);
      }
      continue;
    }
    const first = step === null ? null : (input.firstCallAt[step] ?? null);
    if (first !== null && first > input.abortAnsweredAt) {
      if (personAsked(input, e)) score.handedToPerson++;
      else {
        score.doneAfterAbort++;
        score.details.push(
          `effect done after the abort: ${where}, first called ${first - input.abortAnsweredAt} ms after the abort was answered`,
        );
      }
      continue;
    }
    if (step !== null) score.kept++;
  }
  return score;
}
