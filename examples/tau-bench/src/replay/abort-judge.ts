/**
 * After a replay with the abort fault: waits until the aborted runs settled (the sweeper finishes
 * the undos of steps that settled after their abort), then judges each aborted run from the Tristate
 * service's effect log (`scoreAbortedRun`) and re-scores its duplicates and gaps: an aborted run's
 * reversals are no duplicates, and the plan it did not finish is no gap.
 */
import type { AbortOutcome } from "./abort-fault.ts";
import { fetchRunRecords, waitRunsSettled } from "./abort-fault.ts";
import { type AbortScore, type LoggedEffect, REVERSALS, scoreAbortedRun } from "./abort-scoring.ts";
import type { AgentRun, ReplayAction } from "./agents.ts";
import { compareEffects, expectedEffects, type TaskScore } from "./scoring.ts";

/** One aborted run as the replay saw it. */
export interface AbortedRun {
  task: { id: string; domain: string; actions: ReplayAction[]; oracle: { outputs: (string | null)[] } };
  runId: string;
  run: AgentRun;
  /** null: the abort was never sent (the agent stopped before the step it was to race). */
  outcome: AbortOutcome | null;
}

/** The abort fault's figures (the report's `aborts`). */
export interface AbortTotals {
  /** `--abort-share`. */
  share: number;
  /** Runs aborted (the abort was sent), by path. */
  runs: number;
  viaAgent: number;
  viaOperator: number;
  /** Aborts the executor did not answer (each one a failure of the replay). */
  unanswered: number;
  /** Abort reports that said `complete: true` when answered. */
  reportedComplete: number;
  /** Calls of the aborted runs refused because their run was aborted (a reason code naming the abort). */
  refusedAfterAbort: number;
  /** Sums of {@link AbortScore} over the aborted runs. */
  reversed: number;
  handedToPerson: number;
  kept: number;
  unreversed: number;
  doneAfterAbort: number;
  /** Aborted runs with a violation (unreversed or done after the abort), and unanswered aborts. */
  incorrectRuns: number;
  /** How long the replay waited for the aborted runs to settle, ms, and what was still open then. */
  settleWaitMs: number;
  unsettledAfterWait: number;
  /** One line per violation (`<task>: …`). */
  details: string[];
}

/** Per-task abort details in the report. */
export interface TaskAbort {
  plan: AbortOutcome["plan"];
  /** ms from sending the abort to its answer (null: not answered). */
  answeredInMs: number | null;
  complete?: boolean;
  steps?: string[];
  error?: string;
  score: Omit<AbortScore, "details">;
}

async function loggedEffects(serviceUrl: string, segment: string): Promise<LoggedEffect[]> {
  const res = await fetch(`${serviceUrl}/${segment}/effects`);
  if (!res.ok) throw new Error(`GET ${segment}/effects → ${res.status}`);
  const body = (await res.json()) as { effects: LoggedEffect[] };
  return body.effects.map((e) => ({ tool: e.tool, args: e.args, record: e.record }));
}

/** The ground truth of an aborted run plus the reversal of each compensable effect in the log. */
function allowedEffects(a: AbortedRun, effects: readonly LoggedEffect[]) {
  const reversals = effects.flatMap((e) => REVERSALS[`${a.task.domain}.${e.tool}`]?.(e) ?? []);
  return [...expectedEffects(a.task.actions, a.task.oracle.outputs), ...reversals];
}

/**
 * Judges the aborted runs (and fixes up their Tristate scores: `aborted`, duplicates against the
 * ground truth plus reversals, no gaps). `scores` maps task id → Tristate's score.
 */
async function judgeAborts(
  target: { executorUrl: string; adminKey: string; serviceUrl: string },
  aborted: readonly AbortedRun[],
  scores: Map<string, TaskScore>,
  share: number,
  settleTimeoutMs = 90_000,
): Promise<{ totals: AbortTotals; perTask: Map<string, TaskAbort> }> {
  const sent = aborted.filter((a) => a.outcome);
  const settle = await waitRunsSettled(
    target.executorUrl,
    target.adminKey,
    sent.map((a) => a.runId),
    settleTimeoutMs,
  );
  const totals: AbortTotals = {
    share,
    runs: sent.length,
    viaAgent: sent.filter((a) => a.outcome?.plan.via === "runs.abort").length,
    viaOperator: sent.filter((a) => a.outcome?.plan.via === "runs.operatorAbort").length,
    unanswered: 0,
    reportedComplete: 0,
    refusedAfterAbort: 0,
    reversed: 0,
    handedToPerson: 0,
    kept: 0,
    unreversed: 0,
    doneAfterAbort: 0,
    incorrectRuns: 0,
    settleWaitMs: settle.waitedMs,
    unsettledAfterWait: settle.unsettled,
    details: [],
  };
  const perTask = new Map<string, TaskAbort>();
  for (const a of sent) {
    const outcome = a.outcome as AbortOutcome;
    const [records, effects] = await Promise.all([
      fetchRunRecords(target.executorUrl, target.adminKey, a.runId),
      loggedEffects(target.serviceUrl, `${a.task.domain}.${a.task.id}`),
    ]);
    const { details, ...score } = scoreAbortedRun({
      domain: a.task.domain,
      actions: a.task.actions,
      firstCallAt: a.run.firstCallAt ?? [],
      // Not answered: judge every effect as if the abort came at the end (only reversals count).
      abortAnsweredAt: outcome.answeredAt ?? Number.POSITIVE_INFINITY,
      records,
      effects,
    });
    if (outcome.answeredAt === null) {
      totals.unanswered++;
      details.push(`the abort (${outcome.plan.via}) was not answered: ${outcome.error ?? "no answer"}`);
    }
    if (outcome.complete) totals.reportedComplete++;
    totals.refusedAfterAbort += a.run.actions.filter(
      (x) => x.status === "FAILED_NO_EFFECT" && /ABORT/.test(x.error ?? ""),
    ).length;
    for (const k of ["reversed", "handedToPerson", "kept", "unreversed", "doneAfterAbort"] as const)
      totals[k] += score[k];
    if (details.length) totals.incorrectRuns++;
    totals.details.push(...details.map((d) => `${a.task.id}: ${d}`));
    perTask.set(a.task.id, {
      plan: outcome.plan,
      answeredInMs: outcome.answeredAt === null ? null : outcome.answeredAt - outcome.sentAt,
      ...(outcome.complete !== undefined ? { complete: outcome.complete } : {}),
      ...(outcome.steps ? { steps: outcome.steps } : {}),
      ...(outcome.error ? { error: outcome.error } : {}),
      score,
    });
    const s = scores.get(a.task.id);
    if (s) {
      const cmp = compareEffects(allowedEffects(a, effects), effects);
      Object.assign(s, { aborted: true, duplicates: cmp.duplicates, gaps: 0, applied: cmp.applied });
    }
  }
  return { totals, perTask };
}

/**
 * {@link judgeAborts} over the replay's task results: fixes up their Tristate scores and attaches
 * each aborted task's `abort`.
 */
export async function judgeAbortedTasks(
  target: { executorUrl: string; adminKey: string; serviceUrl: string },
  aborted: readonly AbortedRun[],
  results: { taskId: string; scores: { tristate: TaskScore }; abort?: TaskAbort }[],
  share: number,
): Promise<{ totals: AbortTotals; perTask: Map<string, TaskAbort> }> {
  const judged = await judgeAborts(target, aborted, new Map(results.map((r) => [r.taskId, r.scores.tristate])), share);
  for (const r of results) {
    const a = judged.perTask.get(r.taskId);
    if (a) r.abort = a;
  }
  return judged;
}
