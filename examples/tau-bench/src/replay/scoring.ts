/**
 * Scoring of a replayed task: the final state against the oracle's `state_hash_jcs`, and the domain
 * service's effect log against the ground truth (duplicates: effects applied more often than the
 * ground truth applies them; gaps: ground-truth effects missing) and against what the agent was told
 * (status lies: SUCCEEDED without an effect, or "no effect" with one).
 */
import canonicalize from "canonicalize";
import { isDomainError, kwargsOf } from "../catalog/tools.ts";
import { TOOLS } from "../domain/tools.ts";
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

/**
 * What an agent was told about one write: that it took effect (`effect`) or that it did not
 * (`no_effect`). A write the agent was told is UNKNOWN, or never reached, makes no claim.
 */
export interface WriteClaim extends EffectEntry {
  said: "effect" | "no_effect";
}

/**
 * Status lies of one agent on one task: writes whose final status, as the agent was told it,
 * contradicts the service's effect log (its ground truth, lagged effects included).
 */
export interface StatusLies {
  /** Told SUCCEEDED, and the log has no effect for the write. */
  succeededWithoutEffect: number;
  /** Told no effect (FAILED_NO_EFFECT; a baseline: failed or refused), and the log has its effect. */
  noEffectButApplied: number;
}

/** No lies. */
export const NO_STATUS_LIES: StatusLies = Object.freeze({ succeededWithoutEffect: 0, noEffectButApplied: 0 });

/**
 * Counts status lies per signature (tool + canonical arguments), so repeated identical writes pair
 * up as multisets: with `s` writes told "effect", `f` told "no effect" and `e` effects in the log,
 * `max(0, s − e)` are SUCCEEDED without an effect and `min(f, max(0, e − s))` are "no effect" with
 * one. An effect the agent was told nothing about (UNKNOWN), or applied more often than claimed with
 * no "no effect" claim beside it, is a duplicate or a stated UNKNOWN, not a lie.
 */
export function countStatusLies(claims: readonly WriteClaim[], applied: readonly EffectEntry[]): StatusLies {
  const tally = new Map<string, { s: number; f: number; e: number }>();
  const at = (sig: string) => {
    const known = tally.get(sig);
    if (known) return known;
    const fresh = { s: 0, f: 0, e: 0 };
    tally.set(sig, fresh);
    return fresh;
  };
  for (const c of claims) {
    const t = at(effectSignature(c));
    if (c.said === "effect") t.s++;
    else t.f++;
  }
  for (const e of applied) at(effectSignature(e)).e++;
  let succeededWithoutEffect = 0;
  let noEffectButApplied = 0;
  for (const { s, f, e } of tally.values()) {
    succeededWithoutEffect += Math.max(0, s - e);
    noEffectButApplied += Math.min(f, Math.max(0, e - s));
  }
  return { succeededWithoutEffect, noEffectButApplied };
}

/** An intent record as `runs.get` returns it (the fields the scorer reads). */
export interface RecordStatus {
  /** Catalog name, `<domain>.<tool>`. */
  tool: string;
  /** The persisted original arguments (with `tenant`). */
  args: unknown;
  status: string;
}

/**
 * What the Tristate agent was told, from the FINAL intent records of its run: SUCCEEDED → effect,
 * FAILED_NO_EFFECT → no effect; PENDING and UNKNOWN claim nothing. Records of tools that are not
 * τ-bench writes are skipped.
 */
export function claimsOfRecords(records: readonly RecordStatus[]): WriteClaim[] {
  const claims: WriteClaim[] = [];
  for (const r of records) {
    const [domain, tool] = r.tool.split(".") as [string, string | undefined];
    if (!tool || (domain !== "retail" && domain !== "airline") || TOOLS[domain].get(tool)?.kind !== "write") continue;
    if (r.status !== "SUCCEEDED" && r.status !== "FAILED_NO_EFFECT") continue;
    const args = typeof r.args === "object" && r.args !== null ? kwargsOf(r.args as Record<string, unknown>) : r.args;
    claims.push({ tool, args, said: r.status === "SUCCEEDED" ? "effect" : "no_effect" });
  }
  return claims;
}

/**
 * What a baseline agent reported per write call (it has no intent records): `SUCCEEDED` → effect;
 * `DOMAIN_ERROR` (τ-bench refused) or `FAILED` (it gave up after a transport error or non-2xx) →
 * no effect, as it goes on like an agent told "the tool failed".
 */
export function claimsOfRun(run: AgentRun, actions: readonly ReplayAction[]): WriteClaim[] {
  const claims: WriteClaim[] = [];
  for (const a of run.actions) {
    const action = actions[a.index];
    if (!a.write || !action) continue;
    if (a.status === "SUCCEEDED") claims.push({ tool: action.name, args: action.kwargs, said: "effect" });
    else if (a.status === "FAILED" || a.status === "DOMAIN_ERROR" || a.status === "FAILED_NO_EFFECT") {
      claims.push({ tool: action.name, args: action.kwargs, said: "no_effect" });
    }
  }
  return claims;
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
  /**
   * Writes whose final status contradicts the effect log (see {@link countStatusLies}): Tristate's
   * from its final intent records (filled in after the replay), a baseline's from what it reported.
   */
  statusLies: StatusLies;
  /**
   * The run was aborted mid-plan (the replay's `--abort-share`): it is judged by the abort's own
   * rules (`abort-scoring.ts`) and left out of the matched, unmatched and silently-wrong counts;
   * its duplicates count against the ground truth plus its reversals, and it has no gaps.
   */
  aborted?: boolean;
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
  /** What the agent was told per write; omitted: no lies counted (Tristate's come from its records later). */
  claims?: readonly WriteClaim[];
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
    statusLies: input.claims ? countStatusLies(input.claims, input.applied) : { ...NO_STATUS_LIES },
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
  /** Gaps in tasks with no record in the human queue: nobody was told (Tristate's target: 0). */
  silentGaps: number;
  /** Gaps in tasks with a record in the human queue: waiting for a person, not silent. */
  gapsWaitingForPerson: number;
  writeCalls: number;
  ambiguousCalls: number;
  resolutions: Record<string, number>;
  humanQueueItems: number;
  tasksInHumanQueue: number;
  /** Not matched and not in the human queue. */
  unmatchedNotQueued: number;
  /** Not matched while the agent saw nothing wrong (it believed the task done). */
  silentlyWrong: number;
  /** Status lies, both kinds (see {@link StatusLies}). */
  statusLies: number;
  /** Of which: told SUCCEEDED without an effect. */
  statusLiesSucceededWithoutEffect: number;
  /** Of which: told no effect while the effect is there. */
  statusLiesNoEffectButApplied: number;
  /** Tasks with at least one status lie. */
  tasksWithStatusLies: number;
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
    probeableTasks: mine.filter((s) => s.probeable && !s.aborted).length,
    probeableMatched: mine.filter((s) => s.probeable && !s.aborted && s.matched).length,
    duplicateEffects: mine.reduce((n, s) => n + s.duplicates, 0),
    tasksWithDuplicates: mine.filter((s) => s.duplicates > 0).length,
    gaps: mine.reduce((n, s) => n + s.gaps, 0),
    tasksWithGaps: mine.filter((s) => s.gaps > 0).length,
    silentGaps: mine.filter((s) => s.humanQueueItems === 0).reduce((n, s) => n + s.gaps, 0),
    gapsWaitingForPerson: mine.filter((s) => s.humanQueueItems > 0).reduce((n, s) => n + s.gaps, 0),
    writeCalls: mine.reduce((n, s) => n + s.writeCalls, 0),
    ambiguousCalls: mine.reduce((n, s) => n + s.ambiguousCalls, 0),
    resolutions,
    humanQueueItems: mine.reduce((n, s) => n + s.humanQueueItems, 0),
    tasksInHumanQueue: mine.filter((s) => s.humanQueueItems > 0).length,
    unmatchedNotQueued: mine.filter((s) => !s.aborted && !s.matched && s.humanQueueItems === 0).length,
    silentlyWrong: mine.filter((s) => !s.aborted && !s.matched && !s.reportedProblem && s.humanQueueItems === 0).length,
    statusLies: mine.reduce((n, s) => n + s.statusLies.succeededWithoutEffect + s.statusLies.noEffectButApplied, 0),
    statusLiesSucceededWithoutEffect: mine.reduce((n, s) => n + s.statusLies.succeededWithoutEffect, 0),
    statusLiesNoEffectButApplied: mine.reduce((n, s) => n + s.statusLies.noEffectButApplied, 0),
    tasksWithStatusLies: mine.filter((s) => s.statusLies.succeededWithoutEffect + s.statusLies.noEffectButApplied > 0)
      .length,
  };
}
