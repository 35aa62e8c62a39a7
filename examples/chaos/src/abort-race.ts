/**
 * Aborting runs in a campaign, through the executor's API on any replica: the `abort` fault
 * (`runs.abort` of a running saga, whose agent then stops) and the `abortrace` fault (issue 20): a
 * run is aborted while one of its calls is in flight — `runs.abort` with the agent's key or
 * `runs.operatorAbort` with the admin's, half each — and its agent is not told: it goes on with its
 * plan, its next step called only once the abort was answered, so it must be refused. When no
 * booking (the one tool with a compensation) is in flight, half of the firings arm a running
 * booking task instead: the abort is sent 0–40 ms after its booking call begins.
 */
import { randomUUID } from "node:crypto";
import { REVERSALS, type ReplayTask } from "@tristate/example-tau-bench/replay";
import { type AgentHooks, type AgentPool, type AgentResult, post } from "./agent.ts";

/** Through which procedure a run is aborted. */
export type AbortVia = "runs.abort" | "runs.operatorAbort";

/** What an abort answered: a line for the schedule and when it was answered (null: never, in 60 s). */
export interface AbortAnswer {
  detail: string;
  answeredAt: number | null;
}

/** The race of one run's abort with its calls. */
export interface RaceState {
  via: AbortVia;
  /** The action whose call the abort races. */
  atStep: number;
  /** The abort, once sent. */
  sent: Promise<AbortAnswer> | null;
}

/** One task run of a round, as the abort faults see it. */
export interface LiveRun {
  task: ReplayTask;
  runId: string;
  tenant: string;
  /** Aborted by the `abort` fault: the agent stops at its next call. */
  aborted: boolean;
  /** Aborted by the `abortrace` fault: the agent goes on. */
  race: RaceState | null;
  /** The abort's answer (either fault), once it came. */
  abort: AbortAnswer | null;
  /** The action whose call is in flight now, if any. */
  inFlight: number | null;
  /** Actions begun so far (the next step is this index). */
  begun: number;
  result: AgentResult | null;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Aborts `runId` through `via` (agent key for `runs.abort`, admin key for `runs.operatorAbort`, one
 * action id for every try), asked again on the next replica while none answers, for at most 60 s.
 */
export async function sendAbort(
  pool: AgentPool,
  adminKey: string,
  via: AbortVia,
  runId: string,
  first: number,
): Promise<AbortAnswer> {
  const end = Date.now() + 60_000;
  const operator = via === "runs.operatorAbort";
  const input = operator
    ? { runId, note: "chaos: abort racing in-flight calls", operatorActionId: randomUUID() }
    : { runId, budgetMs: 20_000 };
  const caller = operator ? { ...pool, agentKey: adminKey } : pool;
  for (let i = first; Date.now() < end; i++) {
    const url = pool.urls[i % pool.urls.length] as string;
    const answer = await post(caller, url, via, input, 25_000);
    if ("retryInMs" in answer) {
      await sleep(answer.retryInMs);
      continue;
    }
    if ("error" in answer) return { detail: `run ${runId}: ${via} answered ${answer.status}`, answeredAt: null };
    const report = answer.data as {
      complete?: boolean;
      needsHuman?: number;
      steps?: { stepId: string; outcome: string }[];
    };
    const steps = (report.steps ?? []).map((s) => `${s.stepId}:${s.outcome}`).join(" ");
    return {
      detail: `run ${runId} aborted (${via}): complete ${String(report.complete)}, needs human ${String(report.needsHuman ?? 0)}${steps ? `, ${steps}` : ""}`,
      answeredAt: Date.now(),
    };
  }
  return { detail: `run ${runId}: ${via} unanswered for 60 s`, answeredAt: null };
}

const compensable = (task: ReplayTask, index: number) =>
  Boolean(REVERSALS[`${task.domain}.${task.actions[index]?.name ?? ""}`]);

/**
 * The agent's hooks for a run: they track its call in flight, and for a raced run send an armed abort
 * when its step's call begins and hold every later step until the abort was answered.
 */
export function raceHooks(r: LiveRun, fire: (r: LiveRun) => Promise<AbortAnswer>, random: () => number): AgentHooks {
  return {
    onFlight(index) {
      r.inFlight = index;
      if (index !== null) r.begun = Math.max(r.begun, index + 1);
    },
    async beforeCall(index) {
      const race = r.race;
      if (!race) return;
      if (index === race.atStep && !race.sent) {
        race.sent = sleep(Math.floor(random() * 40)).then(() => fire(r));
      } else if (index > race.atStep && race.sent) {
        await race.sent;
      }
    },
  };
}

/**
 * One `abortrace` firing: a running run whose booking is in flight, else (half the time) a running
 * booking task armed to be aborted when its booking call begins, else any run with a call in flight.
 * Resolves with what happened (null: no run to abort now; an armed run whose agent stopped before its
 * booking also gives null).
 */
export async function abortRaceOne(
  runs: readonly LiveRun[],
  fire: (r: LiveRun) => Promise<AbortAnswer>,
  random: () => number,
): Promise<string | null> {
  const running = runs.filter((r) => !r.result && !r.aborted && !r.race);
  const inFlight = running.filter((r) => r.inFlight !== null);
  const via: AbortVia = random() < 0.5 ? "runs.abort" : "runs.operatorAbort";
  const any = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)];
  const booking = any(inFlight.filter((r) => compensable(r.task, r.inFlight as number)));
  const ahead = (r: LiveRun) => r.task.actions.findIndex((_, i) => i >= r.begun && compensable(r.task, i));
  const armable = running.filter((r) => ahead(r) >= 0);
  if (!booking && armable.length && random() < 0.5) {
    const r = any(armable) as LiveRun;
    const race: RaceState = { via, atStep: ahead(r), sent: null };
    r.race = race;
    // Resolves when the booking's call begins (the hook sends the abort) or the agent stops first.
    while (!race.sent && !r.result) await sleep(20);
    if (!race.sent) return null;
    const answer = await race.sent;
    return `armed on step a${race.atStep} (${r.task.actions[race.atStep]?.name}): ${answer.detail}`;
  }
  const r = booking ?? any(inFlight);
  if (!r || r.inFlight === null) return null;
  const race: RaceState = { via, atStep: r.inFlight, sent: null };
  r.race = race;
  race.sent = fire(r);
  const answer = await race.sent;
  return `racing step a${race.atStep} (${r.task.actions[race.atStep]?.name}): ${answer.detail}`;
}
