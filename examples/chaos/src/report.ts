/** The campaign's output: one line per round, the summary, the JSON report and the reproduction file. */
import { writeFileSync } from "node:fs";
import type { AgentResult } from "./agent.ts";
import type { AbortTally, RecordRow, Violations } from "./checker.ts";
import { type DeadlineTally, deadlineText } from "./deadline-checks.ts";
import type { ChaosFault, FaultCounts, FaultEvent } from "./faults.ts";

/** One round. */
export interface RoundReport {
  round: number;
  startedAt: string;
  tasks: number;
  /** How long agents ran under faults, and how long the sweepers then took to settle, ms. */
  faultMs: number;
  settleMs: number;
  fired: Partial<Record<ChaosFault, number>>;
  killsInFlight: number;
  backendsTerminated: number;
  /** Effects in the remote's logs (lagged: hidden from lookups for a while). */
  effects: number;
  laggedEffects: number;
  records: number;
  /** Records waiting for a person after the round. */
  inHumanQueue: number;
  /** How the agents ended (`completed`, or why they stopped and reported). */
  stopped: Record<string, number>;
  /** Calls the executor did not answer (connection errors, 5xx, timeouts), asked again. */
  unanswered: number;
  violations: Violations;
  /** Answers by deadline − reserve, sends before their deadline (issue 21 §1). */
  deadlines: DeadlineTally;
  /** What the round's aborted runs left at the remote (`abort` and `abortrace`). */
  aborts: AbortTally;
  /** The checker flagged the planted duplicate / gap / unreversed effect of an aborted run. */
  planted: { duplicate: boolean; gap: boolean; abort: boolean };
  /** Replica exits the campaign did not cause, so far. */
  unexpectedExits: number;
  schedule: FaultEvent[];
  details: string[];
  /** The intent records of the runs the checker named, and what their agents were told (the cluster is removed afterwards). */
  failedRuns: { runId: string; told: AgentResult["told"]; records: RecordRow[] }[];
}

/** The whole campaign. */
export interface CampaignReport {
  command: string;
  seed: number;
  startedAt: string;
  durationMs: number;
  replicas: number;
  faults: ChaosFault[];
  intervalsMs: Record<ChaosFault, number>;
  rounds: RoundReport[];
  counts: FaultCounts;
  violations: Violations;
  deadlines: DeadlineTally;
  unexpectedExits: number;
  exits: { replica: number; code: number | null; output: string }[];
}

const v = (x: Violations) =>
  `dup ${x.duplicates} gap ${x.silentGaps} stuck ${x.stuck} lies ${x.statusLies} abort-undone ${x.abortUndone}`;

/** One line for a round. */
export function roundLine(r: RoundReport): string {
  const fired = Object.entries(r.fired)
    .map(([k, n]) => `${k} ${n}`)
    .join(" ");
  const stops = Object.entries(r.stopped)
    .map(([k, n]) => `${k} ${n}`)
    .join(", ");
  const flag = (b: boolean) => (b ? "flagged" : "MISSED");
  const planted = `planted dup ${flag(r.planted.duplicate)}, gap ${flag(r.planted.gap)}, abort ${flag(r.planted.abort)}`;
  return [
    `round ${String(r.round).padStart(3)}`,
    `${r.tasks} tasks ${(r.faultMs / 1000).toFixed(0)} s + settle ${(r.settleMs / 1000).toFixed(1)} s`,
    `${fired} (in flight ${r.killsInFlight}, backends ${r.backendsTerminated})`,
    `effects ${r.effects} lagged ${r.laggedEffects} records ${r.records} queue ${r.inHumanQueue} [${stops}]`,
    abortText(r.aborts),
    v(r.violations),
    deadlineText(r.deadlines),
    planted,
  ].join(" | ");
}

const abortText = (a: AbortTally) =>
  `aborted runs ${a.runs}: reversed ${a.reversed} with a person ${a.handedToPerson} kept ${a.kept}`;

/** The closing summary. */
export function summaryText(c: CampaignReport, passed: boolean, note: string[]): string {
  const f = c.counts.fired;
  const tasks = c.rounds.reduce((n, r) => n + r.tasks, 0);
  const effects = c.rounds.reduce((n, r) => n + r.effects, 0);
  const lagged = c.rounds.reduce((n, r) => n + r.laggedEffects, 0);
  const records = c.rounds.reduce((n, r) => n + r.records, 0);
  const unanswered = c.rounds.reduce((n, r) => n + r.unanswered, 0);
  const queue = c.rounds.reduce((n, r) => n + r.inHumanQueue, 0);
  const stops: Record<string, number> = {};
  for (const r of c.rounds) for (const [k, n] of Object.entries(r.stopped)) stops[k] = (stops[k] ?? 0) + n;
  const killsAll = f.kill + f.skew;
  const aborts = c.rounds.reduce(
    (t, r) => ({
      runs: t.runs + r.aborts.runs,
      reversed: t.reversed + r.aborts.reversed,
      handedToPerson: t.handedToPerson + r.aborts.handedToPerson,
      kept: t.kept + r.aborts.kept,
      unreversed: t.unreversed + r.aborts.unreversed,
      doneAfterAbort: t.doneAfterAbort + r.aborts.doneAfterAbort,
    }),
    { runs: 0, reversed: 0, handedToPerson: 0, kept: 0, unreversed: 0, doneAfterAbort: 0 },
  );
  return [
    "",
    `chaos ${passed ? "PASSED" : "FAILED"} — seed ${c.seed}, ${c.replicas} replica(s), ${(c.durationMs / 60_000).toFixed(1)} min, ${c.rounds.length} rounds, ${tasks} task runs`,
    `  executor SIGKILLs ${killsAll} (kill ${f.kill}, skew restarts ${f.skew}; ${c.counts.killsInFlight} with calls in flight, ${c.counts.killsStarting} while starting)`,
    `  PostgreSQL crashes ${f.pgcrash} (immediate shutdown + restart); pgkill ${f.pgkill} (${c.counts.backendsTerminated} backends terminated); database stalls ${f.dbstall} (forwarding stopped 10–60 s)`,
    `  lag episodes ${f.lag} (${lagged} effects lagged); aborted sagas ${f.abort}; aborts racing in-flight calls ${f.abortrace}; operator actions ${f.operator}`,
    `  ${abortText(aborts)} (effects at the remote after settling; unreversed ${aborts.unreversed}, done after the abort ${aborts.doneAfterAbort})`,
    `  effects ${effects}, intent records ${records}, left waiting for a person ${queue}, calls unanswered and asked again ${unanswered}`,
    `  agents: ${Object.entries(stops)
      .map(([k, n]) => `${k} ${n}`)
      .join(", ")}`,
    `  replica exits not caused by the campaign: ${c.unexpectedExits}`,
    `  violations: ${v(c.violations)}`,
    `  ${deadlineText(c.deadlines)}; worst answer ${c.deadlines.worstAnswerLateMs} ms past deadline − reserve, worst send ${c.deadlines.worstSendLateMs} ms past its deadline; ${c.deadlines.lost} calls lost to killed replicas, ${c.deadlines.sendsWithoutDeadline} sends without Request-Deadline`,
    ...note.map((n) => `  ${n}`),
  ].join("\n");
}

/** Writes the JSON report. */
export function writeJson(path: string, c: CampaignReport): void {
  writeFileSync(path, `${JSON.stringify(c, null, 2)}\n`);
}

/** Writes what reproduces a failing round: the command, seed, round and its schedule, and what the checker saw. */
export function writeRepro(path: string, c: CampaignReport, round: RoundReport): void {
  const repro = {
    command: c.command,
    seed: c.seed,
    round: round.round,
    replicas: c.replicas,
    faults: c.faults,
    intervalsMs: c.intervalsMs,
    violations: round.violations,
    deadlines: round.deadlines,
    planted: round.planted,
    checkerSaw: round.details,
    failedRuns: round.failedRuns,
    schedule: round.schedule,
    unexpectedExits: c.exits,
  };
  writeFileSync(path, `${JSON.stringify(repro, null, 2)}\n`);
}
