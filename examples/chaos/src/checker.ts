/**
 * The checks after every round, from the remote's effect log, the intent log and the oracle:
 * duplicates, silent gaps, records stuck PENDING/UNKNOWN outside the human queue, status lies, and
 * aborted runs left holding an effect (issue 20: a compensable effect neither reversed nor with a
 * person, or an effect of a step first called after the abort was answered) — and, each round, proof
 * that the checker flags a planted duplicate, a planted gap and a planted unreversed abort.
 */
import type { Envelope } from "@tristate/core";
import { kwargsOf } from "@tristate/example-tau-bench/catalog";
import {
  type AbortScore,
  claimsOfRecords,
  countStatusLies,
  type EffectEntry,
  effectSignature,
  expectedEffects,
  type LoggedEffect,
  type ReplayTask,
  scoreAbortedRun,
  type WriteClaim,
} from "@tristate/example-tau-bench/replay";
import type { AgentResult } from "./agent.ts";

/** An intent record as read from the database after the round. */
export interface RecordRow {
  key: string;
  stepId: string;
  /** `<domain>.<tool>`. */
  tool: string;
  args: Record<string, unknown>;
  status: "PENDING" | "SUCCEEDED" | "FAILED_NO_EFFECT" | "UNKNOWN";
  resolution: string | null;
  needsHuman: boolean;
}

/** Everything the checker sees of one task of a round. */
export interface TaskObservation {
  task: ReplayTask;
  agent: AgentResult;
  /** The run was aborted (`runs.abort` / `runs.operatorAbort`) while the agent drove it. */
  aborted: boolean;
  /**
   * For an aborted run whose abort is known to hold: when the abort was answered, epoch ms (null:
   * never answered but recorded by the executor, so every step counts as in flight and only the
   * reversals are judged). Absent: the abort check does not apply (not aborted, or an abort that was
   * never answered nor recorded — the run was not aborted).
   */
  abortAnsweredAt?: number | null;
  records: RecordRow[];
  /** The instance's effect log (lagged effects included), with the changed record where the tool returned one. */
  effects: LoggedEffect[];
  /** How many of those effects the remote hid from its lookups for a while (the lag fault). */
  lagged?: number;
}

/** Violation counts (all must be 0). */
export interface Violations {
  /** Effects applied more often than the run has intent records for them (each record: ≤ 1 effect). */
  duplicates: number;
  /** Ground-truth effects missing while the agent saw no problem and nothing waits for a person. */
  silentGaps: number;
  /** Records PENDING, or UNKNOWN and not in the human queue, after the final sweep. */
  stuck: number;
  /** SUCCEEDED without the effect, or FAILED_NO_EFFECT with it (final records and what the agent was told). */
  statusLies: number;
  /**
   * Effects an aborted run holds at the remote: compensable ones neither reversed nor waiting for a
   * person, and any of a step first called after the abort was answered (`scoreAbortedRun`).
   */
  abortUndone: number;
}

/** No violations. */
export const NO_VIOLATIONS: Violations = Object.freeze({
  duplicates: 0,
  silentGaps: 0,
  stuck: 0,
  statusLies: 0,
  abortUndone: 0,
});

/** Adds `b` into `a`. */
export function addViolations(a: Violations, b: Violations): Violations {
  return {
    duplicates: a.duplicates + b.duplicates,
    silentGaps: a.silentGaps + b.silentGaps,
    stuck: a.stuck + b.stuck,
    statusLies: a.statusLies + b.statusLies,
    abortUndone: a.abortUndone + b.abortUndone,
  };
}

/** The sum of the counts. */
export const violationCount = (v: Violations): number =>
  v.duplicates + v.silentGaps + v.stuck + v.statusLies + v.abortUndone;

function tally(entries: readonly EffectEntry[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const e of entries) m.set(effectSignature(e), (m.get(effectSignature(e)) ?? 0) + 1);
  return m;
}

/** A record as an effect entry: the tool without its domain, the arguments without `tenant`. */
function entryOf(r: RecordRow): EffectEntry {
  return { tool: r.tool.split(".")[1] ?? r.tool, args: kwargsOf(r.args) };
}

/** What the agent was told per write action: SUCCEEDED → effect, FAILED_NO_EFFECT → none. */
function toldClaims(o: TaskObservation): WriteClaim[] {
  const claims: WriteClaim[] = [];
  for (const [i, told] of o.agent.told.entries()) {
    const action = o.task.actions[i];
    if (!action?.write || !told) continue;
    if (told.status === "SUCCEEDED") claims.push({ tool: action.name, args: action.kwargs, said: "effect" });
    if (told.status === "FAILED_NO_EFFECT") claims.push({ tool: action.name, args: action.kwargs, said: "no_effect" });
  }
  return claims;
}

/** Checks one task; `details` says what was wrong, for the reproduction file. */
export function checkTask(o: TaskObservation): {
  violations: Violations;
  details: string[];
  /** For a judged aborted run: what its abort left at the remote. */
  abort?: Omit<AbortScore, "details">;
} {
  const details: string[] = [];
  const applied = tally(o.effects);
  const recorded = tally(o.records.map(entryOf));
  let duplicates = 0;
  for (const [sig, n] of applied) {
    const extra = n - (recorded.get(sig) ?? 0);
    if (extra > 0) {
      duplicates += extra;
      details.push(`duplicate: ${sig} applied ${n}× for ${recorded.get(sig) ?? 0} intent record(s)`);
    }
  }
  let silentGaps = 0;
  const open = o.records.some((r) => r.status === "UNKNOWN" || r.status === "PENDING" || r.needsHuman);
  if (!o.aborted && o.agent.stopped === null && !open) {
    const want = tally(expectedEffects(o.task.actions, o.task.oracle.outputs));
    for (const [sig, n] of want) {
      const missing = n - (applied.get(sig) ?? 0);
      if (missing > 0) {
        silentGaps += missing;
        details.push(`silent gap: ${sig} expected ${n}×, applied ${applied.get(sig) ?? 0}×, agent saw no problem`);
      }
    }
  }
  let stuck = 0;
  for (const r of o.records) {
    if (r.status === "PENDING" || (r.status === "UNKNOWN" && !r.needsHuman)) {
      stuck++;
      details.push(`stuck: ${r.key} (${r.tool} step ${r.stepId}) ${r.status} outside the human queue`);
    }
  }
  const recordLies = countStatusLies(claimsOfRecords(o.records), o.effects);
  const toldLies = countStatusLies(toldClaims(o), o.effects);
  const statusLies =
    recordLies.succeededWithoutEffect +
    recordLies.noEffectButApplied +
    toldLies.succeededWithoutEffect +
    toldLies.noEffectButApplied;
  if (statusLies > 0) {
    details.push(
      `status lies: records ${JSON.stringify(recordLies)}, agent told ${JSON.stringify(toldLies)} (told ${JSON.stringify(o.agent.told)})`,
    );
  }
  let abortUndone = 0;
  let abort: Omit<AbortScore, "details"> | undefined;
  if (o.aborted && o.abortAnsweredAt !== undefined) {
    const judged = scoreAbortedRun({
      domain: o.task.domain,
      actions: o.task.actions,
      firstCallAt: o.agent.firstCallAt,
      abortAnsweredAt: o.abortAnsweredAt ?? Number.POSITIVE_INFINITY,
      records: o.records,
      effects: o.effects,
    });
    abortUndone = judged.unreversed + judged.doneAfterAbort;
    const { details: why, ...counts } = judged;
    abort = counts;
    details.push(...why);
  }
  return {
    violations: { duplicates, silentGaps, stuck, statusLies, abortUndone },
    details: details.map((d) => `${o.agent.runId}: ${d}`),
    ...(abort ? { abort } : {}),
  };
}

/** What the round's judged aborted runs left at the remote (sums of their scores). */
export interface AbortTally {
  /** Aborted runs judged (abort answered, or recorded by the executor). */
  runs: number;
  reversed: number;
  handedToPerson: number;
  kept: number;
  unreversed: number;
  doneAfterAbort: number;
}

/** An empty {@link AbortTally}. */
export const NO_ABORTS: AbortTally = Object.freeze({
  runs: 0,
  reversed: 0,
  handedToPerson: 0,
  kept: 0,
  unreversed: 0,
  doneAfterAbort: 0,
});

/** Adds one judged run's counts to a tally. */
export function tallyAbort(t: AbortTally, a: Omit<AbortScore, "details">): AbortTally {
  return {
    runs: t.runs + 1,
    reversed: t.reversed + a.reversed,
    handedToPerson: t.handedToPerson + a.handedToPerson,
    kept: t.kept + a.kept,
    unreversed: t.unreversed + a.unreversed,
    doneAfterAbort: t.doneAfterAbort + a.doneAfterAbort,
  };
}

/** A task whose run went through with every ground-truth effect: a clean base for the planted faults. */
function cleanBase(observations: readonly TaskObservation[]): TaskObservation {
  for (const o of observations) {
    const v = checkTask(o).violations;
    if (!o.aborted && o.agent.stopped === null && o.effects.length > 0 && violationCount(v) === 0) return o;
  }
  // None this round: the oracle's own run of any task with an effect (records = effects = expected).
  for (const o of observations) {
    const expected = expectedEffects(o.task.actions, o.task.oracle.outputs);
    if (expected.length === 0) continue;
    const told = o.task.actions.map((a, i) => {
      const out = o.task.oracle.outputs[i];
      const refused = typeof out === "string" && out.startsWith("Error:");
      const status: Envelope["status"] = a.write && refused ? "FAILED_NO_EFFECT" : "SUCCEEDED";
      return { status, ...(status === "FAILED_NO_EFFECT" ? { code: "REJECTED" } : {}) };
    });
    const records: RecordRow[] = expected.map((e, i) => ({
      key: `planted-${i}`,
      stepId: `p${i}`,
      tool: `${o.task.domain}.${e.tool}`,
      args: e.args as Record<string, unknown>,
      status: "SUCCEEDED",
      resolution: null,
      needsHuman: false,
    }));
    return { ...o, aborted: false, agent: { ...o.agent, stopped: null, told }, records, effects: expected };
  }
  throw new Error("no task of the round has an effect to plant a duplicate or a gap in");
}

/** A booking with its record but no reversal, in an aborted airline run: what the abort check must flag. */
function plantedUnreversedAbort(base: TaskObservation): TaskObservation {
  const args = { user_id: "planted", origin: "JFK", destination: "SFO" };
  return {
    ...base,
    task: { ...base.task, domain: "airline", actions: [{ name: "book_reservation", kwargs: args, write: true }] },
    agent: { ...base.agent, stopped: "aborted", told: [{ status: "SUCCEEDED" }], firstCallAt: [0] },
    aborted: true,
    abortAnsweredAt: 1,
    records: [
      {
        key: "planted",
        stepId: "a0",
        tool: "airline.book_reservation",
        args,
        status: "SUCCEEDED",
        resolution: null,
        needsHuman: false,
      },
    ],
    effects: [{ tool: "book_reservation", args, record: { reservation_id: "PLANTED" } }],
  };
}

/**
 * Plants a duplicate (one effect applied twice), a gap (one effect missing) into a clean task of the
 * round, and an aborted run holding an unreversed booking, and checks that the checker flags each;
 * false means the checker is blind.
 */
export function checkerSelfTest(observations: readonly TaskObservation[]): {
  duplicate: boolean;
  gap: boolean;
  abort: boolean;
} {
  const base = cleanBase(observations);
  const [first, ...rest] = base.effects;
  if (!first) return { duplicate: false, gap: false, abort: false };
  const dup = checkTask({ ...base, effects: [...base.effects, first] }).violations;
  const gap = checkTask({ ...base, effects: rest }).violations;
  const abort = checkTask(plantedUnreversedAbort(base)).violations;
  return { duplicate: dup.duplicates > 0, gap: gap.silentGaps > 0, abort: abort.abortUndone > 0 };
}

/** Checks every task of a round, tallies its aborted runs, and runs the planted self-test. */
export function checkRound(observations: readonly TaskObservation[]): {
  violations: Violations;
  aborts: AbortTally;
  details: string[];
  planted: ReturnType<typeof checkerSelfTest>;
} {
  let violations = NO_VIOLATIONS;
  let aborts = NO_ABORTS;
  const details: string[] = [];
  for (const o of observations) {
    const c = checkTask(o);
    violations = addViolations(violations, c.violations);
    if (c.abort) aborts = tallyAbort(aborts, c.abort);
    details.push(...c.details);
  }
  return { violations, aborts, details, planted: checkerSelfTest(observations) };
}
