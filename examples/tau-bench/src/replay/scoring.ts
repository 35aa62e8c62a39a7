/**
 * Scoring of a replayed task: the final state against the oracle's `state_hash_jcs`, and the domain
 * service's effect log against the ground truth (duplicates: effects applied more often than the
 * ground truth applies them; gaps: ground-truth effects missing).
 */
import canonicalize from "canonicalize";
import { isDomainError } from "../catalog/tools.ts";
import type { AgentName, AgentRun, ReplayAction } from "./agents.ts";

/** A write that took effect: a tool and its arguments. */
export interface EffectEntry {
  tool: string;
  args: unknown;
}

/** Identity of an effect for counting: the tool and its canonical (RFC 8785) arguments. */
export function effectSignature(e: EffectEntry): string {
  return `${e.tool} ${canonicalize(e.args) ?? "null"}`;
}

/**
 * The effects the ground truth applies: write actions whose oracle output is neither an `Error: …`
 * refusal nor `null` (exactly what the service logs as an effect).
 */
export function expectedEffects(actions: readonly ReplayAction[], outputs: readonly (string | null)[]): EffectEntry[] {
  return actions
    .map((a, i) => ({ a, out: outputs[i] }))
    .filter(({ a, out }) => a.write && typeof out === "string" && !isDomainError(out))
    .map(({ a }) => ({ tool: a.name, args: a.kwargs }));
}

/** Effect counts of one task. */
export interface EffectComparison {
  /** Ground-truth effects. */
  expected: number;
  /** Effects in the service's log. */
  applied: number;
  /** Effects applied more often than the ground truth applies them (incl. effects it never applies). */
  duplicates: number;
  /** Ground-truth effects missing from the log. */
  gaps: number;
}

/** Compares the effect log with the ground truth, per signature (multiset difference both ways). */
export function compareEffects(expected: readonly EffectEntry[], applied: readonly EffectEntry[]): EffectComparison {
  const want = new Map<string, number>();
  for (const e of expected) want.set(effectSignature(e), (want.get(effectSignature(e)) ?? 0) + 1);
  const got = new Map<string, number>();
  for (const e of applied) got.set(effectSignature(e), (got.get(effectSignature(e)) ?? 0) + 1);
  let duplicates = 0;
  let gaps = 0;
  for (const [sig, n] of got) duplicates += Math.max(0, n - (want.get(sig) ?? 0));
  for (const [sig, n] of want) gaps += Math.max(0, n - (got.get(sig) ?? 0));
  return { expected: expected.length, applied: applied.length, duplicates, gaps };
}

/** One agent's score on one task. */
export interface TaskScore extends EffectComparison {
  taskId: string;
  agent: AgentName;
  /** Final state hash equals the oracle's `state_hash_jcs`. */
  matched: boolean;
  /** Every write tool of the task has a probe in the catalog. */
  probeable: boolean;
  /** Write calls that saw an ambiguous outcome (UNKNOWN envelope; baselines: timeout/reset/5xx). */
  ambiguousCalls: number;
  /** Tristate: how each write step that went through UNKNOWN ended. */
  resolutions: Record<string, number>;
  /** Tristate: records of this task's run waiting in the human queue. */
  humanQueueItems: number;
  /** The agent knew something was not done (it stopped, or an action failed outside the domain's own refusals). */
  reportedProblem: boolean;
  /** The agent stopped early, and why. */
  stopped: AgentRun["stopped"];
  /** Requests the agent sent for write actions. */
  writeCalls: number;
}

/**
 * How a write step that went through UNKNOWN ended, from the agent's last envelope: `found`,
 * `absent_resent`, `absent_resent_refused` (resent after absent probes, and the domain refused: no
 * effect), `needs_human`, or `unresolved`.
 */
export function resolutionOf(a: AgentRun["actions"][number]): string | null {
  if (a.ambiguous === 0 && !a.resolution) return null;
  if (a.resolution) return a.resolution;
  if (a.status === "FAILED_NO_EFFECT" && a.error === "REJECTED") return "absent_resent_refused";
  if (a.status === "SUCCEEDED") return "settled";
  return "unresolved";
}

/** Scores one agent's run of one task. */
export function scoreTask(input: {
  run: AgentRun;
  oracleHash: string;
  finalHash: string;
  expected: readonly EffectEntry[];
  applied: readonly EffectEntry[];
  probeable: boolean;
  humanQueueItems?: number;
}): TaskScore {
  const { run } = input;
  const resolutions: Record<string, number> = {};
  let ambiguousCalls = 0;
  let writeCalls = 0;
  let reportedProblem = run.stopped !== null;
  for (const a of run.actions) {
    if (!a.write) continue;
    writeCalls += a.calls;
    ambiguousCalls += a.ambiguous;
    if (run.agent === "tristate") {
      const r = resolutionOf(a);
      if (r) resolutions[r] = (resolutions[r] ?? 0) + 1;
      if (a.status === "UNKNOWN" || (a.status === "FAILED_NO_EFFECT" && a.error !== "REJECTED")) reportedProblem = true;
    } else if (a.status === "FAILED") {
      reportedProblem = true;
    }
  }
  return {
    taskId: run.taskId,
    agent: run.agent,
    matched: input.finalHash === input.oracleHash,
    probeable: input.probeable,
    ...compareEffects(input.expected, input.applied),
    ambiguousCalls,
    resolutions,
    humanQueueItems: input.humanQueueItems ?? 0,
    reportedProblem,
    stopped: run.stopped,
    writeCalls,
  };
}

/** Totals of one agent over a replay. */
export interface AgentTotals {
  agent: AgentName;
  tasks: number;
  matched: number;
  matchRate: number;
  probeableTasks: number;
  probeableMatched: number;
  duplicateEffects: number;
  tasksWithDuplicates: number;
  gaps: number;
  tasksWithGaps: number;
  writeCalls: number;
  ambiguousCalls: number;
  resolutions: Record<string, number>;
  humanQueueItems: number;
  tasksInHumanQueue: number;
  /** Not matched and not in the human queue. */
  unmatchedNotQueued: number;
  /** Not matched while the agent saw nothing wrong (it believed the task done). */
  silentlyWrong: number;
}

/** Sums task scores of one agent. */
export function totalsOf(agent: AgentName, scores: readonly TaskScore[]): AgentTotals {
  const mine = scores.filter((s) => s.agent === agent);
  const resolutions: Record<string, number> = {};
  for (const s of mine) for (const [k, n] of Object.entries(s.resolutions)) resolutions[k] = (resolutions[k] ?? 0) + n;
  const matched = mine.filter((s) => s.matched).length;
  return {
    agent,
    tasks: mine.length,
    matched,
    matchRate: mine.length ? matched / mine.length : 0,
    probeableTasks: mine.filter((s) => s.probeable).length,
    probeableMatched: mine.filter((s) => s.probeable && s.matched).length,
    duplicateEffects: mine.reduce((n, s) => n + s.duplicates, 0),
    tasksWithDuplicates: mine.filter((s) => s.duplicates > 0).length,
    gaps: mine.reduce((n, s) => n + s.gaps, 0),
    tasksWithGaps: mine.filter((s) => s.gaps > 0).length,
    writeCalls: mine.reduce((n, s) => n + s.writeCalls, 0),
    ambiguousCalls: mine.reduce((n, s) => n + s.ambiguousCalls, 0),
    resolutions,
    humanQueueItems: mine.reduce((n, s) => n + s.humanQueueItems, 0),
    tasksInHumanQueue: mine.filter((s) => s.humanQueueItems > 0).length,
    unmatchedNotQueued: mine.filter((s) => !s.matched && s.humanQueueItems === 0).length,
    silentlyWrong: mine.filter((s) => !s.matched && !s.reportedProblem && s.humanQueueItems === 0).length,
  };
}
