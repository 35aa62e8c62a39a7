/** The replay's report as a text table. */
import { AGENTS } from "./agents.ts";
import type { ReplayReport } from "./replay.ts";

const pct = (n: number, d: number) => (d === 0 ? "–" : `${((100 * n) / d).toFixed(1)}%`);

/** A rate or weight as people write it: `0.22`, never `0.22000000000000003` (float noise). */
const decimal = (n: number) => String(Number(n.toFixed(6)));

/**
 * The headline's gaps: Tristate's silent ones (nobody told) apart from those waiting for a person in
 * its queue (`gaps 0 · 1 waiting for a person`); a baseline has no queue, so all its gaps count.
 */
function gapsText(t: ReplayReport["totals"][(typeof AGENTS)[number]], agent: (typeof AGENTS)[number]): string {
  if (agent !== "tristate") return `gaps ${t.gaps}`;
  return `gaps ${t.silentGaps} · ${t.gapsWaitingForPerson} waiting for a person`;
}

const LABEL = { tristate: "Tristate", retry_any: "retry on any error", never_retry: "never retry" } as const;

/** Formats the totals side by side, the targets and the human queue. */
export function formatReport(report: ReplayReport): string {
  const t = report.totals;
  const rows: [string, (a: (typeof AGENTS)[number]) => string][] = [
    ["tasks matched (final state = oracle)", (a) => `${t[a].matched}/${t[a].tasks} (${pct(t[a].matched, t[a].tasks)})`],
    [
      "  of tasks whose write tools have a probe",
      (a) => `${t[a].probeableMatched}/${t[a].probeableTasks} (${pct(t[a].probeableMatched, t[a].probeableTasks)})`,
    ],
    ["duplicate effects (tasks)", (a) => `${t[a].duplicateEffects} (${t[a].tasksWithDuplicates})`],
    ["gaps: ground-truth effects missing (tasks)", (a) => `${t[a].gaps} (${t[a].tasksWithGaps})`],
    [
      "status lies: SUCCEEDED w/o effect + no effect with one (tasks)",
      (a) =>
        `${t[a].statusLiesSucceededWithoutEffect} + ${t[a].statusLiesNoEffectButApplied} (${t[a].tasksWithStatusLies})`,
    ],
    ["write requests by the agent", (a) => String(t[a].writeCalls)],
    ["ambiguous outcomes seen (UNKNOWN / timeout, reset, 5xx)", (a) => String(t[a].ambiguousCalls)],
    [
      "UNKNOWN steps resolved as",
      (a) =>
        a === "tristate"
          ? Object.entries(t[a].resolutions)
              .sort()
              .map(([k, n]) => `${k} ${n}`)
              .join(", ") || "–"
          : "–",
    ],
    [
      "items left for a human (tasks)",
      (a) => (a === "tristate" ? `${t[a].humanQueueItems} (${t[a].tasksInHumanQueue})` : "– (no queue)"),
    ],
    ["unmatched, not in a human queue", (a) => String(t[a].unmatchedNotQueued)],
    ["unmatched while the agent saw no problem", (a) => String(t[a].silentlyWrong)],
  ];
  const head = ["", ...AGENTS.map((a) => LABEL[a])];
  const body = rows.map(([label, f]) => [label, ...AGENTS.map(f)]);
  const widths = head.map((_, i) => Math.max(...[head, ...body].map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i] ?? 0)).join(" | ")} |`;
  const o = report.options;
  const mix = Object.entries(o.faultMix)
    .map(([k, w]) => `${k}=${decimal(w)}`)
    .join(",");
  const out = [
    `τ-bench replay ${report.replayId}: ${o.tasks} tasks, fault rate ${decimal(o.faultRate)} on write requests (mix ${mix}; lag ${o.lagMs} ms answered ${o.lagResponse}, hang ${o.hangMs} ms), seed ${o.seed}, concurrency ${o.concurrency}`,
    `settle windows declared: ${formatSettle(o.settleMs)}`,
    `executor database: ${report.database}; ${report.machine.cpus} × ${report.machine.cpuModel}, Node ${report.machine.node}; ${(report.durationMs / 1000).toFixed(1)} s`,
    "",
    line(head),
    `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`,
    ...body.map(line),
    "",
    ...AGENTS.map(
      (a) =>
        `${LABEL[a]}: matched ${t[a].matched}/${t[a].tasks} · duplicates ${t[a].duplicateEffects} · ${gapsText(t[a], a)} · status lies ${t[a].statusLies}`,
    ),
    "",
    targetsLine(report),
    ...abortLines(report.aborts),
  ];
  if (report.humanQueue.length) {
    out.push("", "human queue (Tristate):");
    for (const i of report.humanQueue.slice(0, 20)) {
      out.push(`  ${i.runId} ${i.stepId} ${i.effect} — ${i.error?.code ?? ""}: ${i.error?.message ?? ""}`);
    }
    if (report.humanQueue.length > 20) out.push(`  … ${report.humanQueue.length - 20} more`);
  }
  return out.join("\n");
}

const yes = (b: boolean) => (b ? "yes" : "NO");

/**
 * The probe-able tasks Tristate left unmatched whose run waits in the human queue on a refused resend
 * (`RESEND_REFUSED`, rule 5f): an answer was lost, the probes found nothing, the same-key resend was
 * refused by the domain (e.g. `retail-train-27`, whose ground truth refuses that very step), and as a
 * refusal proves nothing about the original, a person decides while the rest of the plan waits.
 * @returns task ids in report order.
 */
export function tasksWaitingOnRefusedResend(report: Pick<ReplayReport, "replayId" | "tasks" | "humanQueue">): string[] {
  const refused = new Set(report.humanQueue.filter((i) => i.error?.code === "RESEND_REFUSED").map((i) => i.runId));
  return report.tasks
    .filter((r) => r.probeable && !r.scores.tristate.aborted && !r.scores.tristate.matched)
    .filter((r) => refused.has(`${report.replayId}.${r.taskId}`))
    .map((r) => r.taskId);
}

/**
 * The targets line: each target `yes`/`NO`; a NO on "every probe-able task matched" names the tasks
 * that wait on a refused resend in the human queue (not a duplicate, not a silent gap: rule 5f).
 */
export function targetsLine(report: Pick<ReplayReport, "replayId" | "tasks" | "humanQueue" | "targets">): string {
  const t = report.targets;
  const waiting = t.probeableAllMatched ? [] : tasksWaitingOnRefusedResend(report);
  const why = waiting.length
    ? ` (${waiting.length} waiting in the human queue on a refused resend, rule 5f: ${waiting.join(", ")})`
    : "";
  return `targets (Tristate): every probe-able task matched: ${yes(t.probeableAllMatched)}${why}; zero duplicate effects: ${yes(t.zeroDuplicates)}; every unmatched task in the human queue: ${yes(t.everyUnmatchedInHumanQueue)}; every aborted run correct: ${yes(t.abortedRunsCorrect)}`;
}

/** The abort fault's figures (Tristate only: the baselines have no run to abort), and its violations. */
function abortLines(a: ReplayReport["aborts"]): string[] {
  if (!a) return [];
  return [
    "",
    `abort fault (--abort-share ${a.share}): ${a.runs} runs aborted mid-plan (runs.abort ${a.viaAgent}, runs.operatorAbort ${a.viaOperator}), ${a.unanswered} not answered, ${a.reportedComplete} reported complete when answered; ${a.refusedAfterAbort} later calls refused (run aborted)`,
    `  at the remote after settling (${(a.settleWaitMs / 1000).toFixed(1)} s, ${a.unsettledAfterWait} records still open): ${a.reversed} effects reversed, ${a.handedToPerson} handed to a person, ${a.kept} kept (in flight at the abort, no compensation declared)`,
    `  violations: ${a.unreversed} unreversed, ${a.doneAfterAbort} done after the abort, ${a.incorrectRuns} incorrect runs`,
    ...a.details.slice(0, 20).map((d) => `  ${d}`),
  ];
}

/**
 * The settle windows of a catalog in one line, grouped by value (`2500 ms (11 write tools with a
 * probe)`); "none (…)" when no tool declares one (lag declared unbounded).
 */
export function formatSettle(settleMs: Record<string, number>): string {
  const byValue = new Map<number, string[]>();
  for (const [tool, ms] of Object.entries(settleMs)) byValue.set(ms, [...(byValue.get(ms) ?? []), tool]);
  if (byValue.size === 0) return "none (lag declared unbounded: an unsafe tool's UNKNOWN waits for a human)";
  return [...byValue]
    .sort(([a], [b]) => a - b)
    .map(([ms, tools]) => `${ms} ms (${tools.length} write tools with a probe)`)
    .join("; ");
}
