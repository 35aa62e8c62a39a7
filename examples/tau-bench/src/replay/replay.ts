/**
 * The replay: every task once per agent on its own service instance (`<domain>.<task id>`), scored
 * by final state and effect log; Tristate's human queue read back from the executor API.
 */
import { cpus } from "node:os";
import { basename, dirname } from "node:path";
import { hasProbe } from "../catalog/tools.ts";
import type { DomainName } from "../domain/database.ts";
import { toPlain } from "../domain/py-json.ts";
import { loadOracle, loadTasks, type OracleEntry } from "../domain/tasks.ts";
import { TOOLS } from "../domain/tools.ts";
import type { RealismTable } from "../service/realism.ts";
import { abortDriver, abortPlanOf } from "./abort-fault.ts";
import { type AbortedRun, type AbortTotals, judgeAbortedTasks, type TaskAbort } from "./abort-judge.ts";
import {
  AGENTS,
  type AgentName,
  type AgentRun,
  type BaselineOptions,
  DEFAULT_BASELINE_OPTIONS,
  DEFAULT_TRISTATE_POLICY,
  httpExecute,
  type ReplayAction,
  runBaselineAgent,
  runTristateAgent,
  type TristatePolicy,
} from "./agents.ts";
import type { ReplayEnvironment } from "./environment.ts";
import {
  type AgentTotals,
  claimsOfRecords,
  claimsOfRun,
  countStatusLies,
  type EffectEntry,
  expectedEffects,
  type RecordStatus,
  scoreTask,
  type TaskScore,
  totalsOf,
} from "./scoring.ts";

/** One task ready to replay. */
export interface ReplayTask {
  id: string;
  domain: DomainName;
  actions: ReplayAction[];
  oracle: OracleEntry;
}

/** A task file and its oracle file. */
export interface TaskSource {
  tasks: string;
  oracle: string;
}

function domainOf(taskId: string, file: string): DomainName {
  const prefix = taskId.split("-")[0];
  if (prefix === "retail" || prefix === "airline") return prefix;
  const dir = basename(dirname(file));
  if (dir === "retail" || dir === "airline") return dir;
  throw new Error(`${file}: cannot tell the domain of task ${taskId} (id prefix or folder retail/airline)`);
}

/**
 * Loads task files of the shared format with their oracles.
 * @throws when a file is unreadable, a task has no oracle entry, or a tool is unknown.
 */
export function loadReplayTasks(sources: readonly TaskSource[]): ReplayTask[] {
  const out: ReplayTask[] = [];
  for (const src of sources) {
    const oracle = loadOracle(src.oracle);
    for (const t of loadTasks(src.tasks)) {
      const domain = domainOf(t.id, src.tasks);
      const entry = oracle[t.id];
      if (!entry) throw new Error(`${src.oracle}: no oracle entry for task ${t.id}`);
      out.push({
        id: t.id,
        domain,
        oracle: entry,
        actions: t.actions.map((a) => {
          const def = TOOLS[domain].get(a.name);
          if (!def) throw new Error(`${src.tasks}: task ${t.id} uses unknown ${domain} tool ${a.name}`);
          return { name: a.name, kwargs: toPlain(a.kwargs) as Record<string, unknown>, write: def.kind === "write" };
        }),
      });
    }
  }
  return out;
}

/** Per-task result with every agent's score. */
export interface TaskResult {
  taskId: string;
  domain: DomainName;
  probeable: boolean;
  writes: number;
  scores: Record<AgentName, TaskScore>;
  /** The abort fault's plan and judgement, when this task's Tristate run was aborted. */
  abort?: TaskAbort;
}

/** One record of the human queue that belongs to this replay. */
export interface QueueItem {
  key: string;
  tool: string;
  runId: string;
  stepId: string;
  effect: string;
  error: { code: string; message: string } | null;
}

/** The replay's report (also written as JSON). */
export interface ReplayReport {
  replayId: string;
  startedAt: string;
  durationMs: number;
  machine: { cpus: number; cpuModel: string; node: string; platform: string };
  options: {
    faultRate: number;
    faultMix: Record<string, number>;
    /** `lag`: how long an effect stays invisible to lookups, ms. */
    lagMs: number;
    /** `lag`: what the client got. */
    lagResponse: string;
    /** `hang`: how long the answer was withheld, ms. */
    hangMs: number;
    /** The settle window the catalog declared per write tool, ms (empty: lag declared unbounded). */
    settleMs: Record<string, number>;
    seed: number;
    concurrency: number;
    tasks: number;
  };
  database: string;
  totals: Record<AgentName, AgentTotals>;
  /** The targets of issue 6, checked on this run. */
  targets: {
    probeableAllMatched: boolean;
    zeroDuplicates: boolean;
    everyUnmatchedInHumanQueue: boolean;
    /** Every aborted run correct (see `abort-scoring.ts`) and every abort answered; true without aborts. */
    abortedRunsCorrect: boolean;
  };
  /** The abort fault's figures (`--abort-share`), or null when no run was to be aborted. */
  aborts: AbortTotals | null;
  humanQueue: QueueItem[];
  tasks: TaskResult[];
}

/** Options of {@link replayTasks}. */
export interface ReplayOptions {
  concurrency: number;
  policy?: TristatePolicy;
  baseline?: BaselineOptions;
  /** Called after each task (progress). */
  onTask?: (done: number, total: number, result: TaskResult) => void;
  /** Prefix of run ids (default: a fresh replay id). */
  replayId?: string;
  /** The abort fault: this share of the runs (drawn from `seed` and the task id) is aborted mid-plan. */
  abort?: { share: number; seed: number };
}

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url} → ${res.status}`);
  return (await res.json()) as T;
}

/** The final state hash and effect log of one service instance. */
async function observe(serviceUrl: string, segment: string): Promise<{ hash: string; effects: EffectEntry[] }> {
  const [h, e] = await Promise.all([
    getJson<{ state_hash_jcs: string }>(`${serviceUrl}/${segment}/state-hash`),
    getJson<{ effects: EffectEntry[] }>(`${serviceUrl}/${segment}/effects`),
  ]);
  return { hash: h.state_hash_jcs, effects: e.effects.map((x) => ({ tool: x.tool, args: x.args })) };
}

/** Records of the human queue (`queue.list`, all pages) whose run belongs to this replay. */
export async function humanQueueOf(executorUrl: string, adminKey: string, runPrefix: string): Promise<QueueItem[]> {
  const items: QueueItem[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 1000; page++) {
    const input = encodeURIComponent(JSON.stringify({ limit: 500, ...(cursor ? { cursor } : {}) }));
    const res = await fetch(`${executorUrl}/trpc/queue.list?input=${input}`, {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    if (!res.ok) throw new Error(`queue.list → ${res.status}: ${await res.text()}`);
    const body = (await res.json()) as { result: { data: { items: QueueItem[]; nextCursor: string | null } } };
    for (const i of body.result.data.items) {
      if (i.runId.startsWith(runPrefix)) {
        items.push({ key: i.key, tool: i.tool, runId: i.runId, stepId: i.stepId, effect: i.effect, error: i.error });
      }
    }
    cursor = body.result.data.nextCursor ?? undefined;
    if (!cursor) break;
  }
  return items;
}

/**
 * The intent records of one run (`runs.get`, oldest first); none when the run has no record (a task
 * without writes, or one the agent stopped before its first write).
 */
export async function runRecordsOf(executorUrl: string, adminKey: string, runId: string): Promise<RecordStatus[]> {
  const input = encodeURIComponent(JSON.stringify({ runId }));
  const res = await fetch(`${executorUrl}/trpc/runs.get?input=${input}`, {
    headers: { authorization: `Bearer ${adminKey}` },
  });
  if (res.status === 404) return [];
  if (!res.ok) throw new Error(`runs.get ${runId} → ${res.status}: ${await res.text()}`);
  const body = (await res.json()) as { result: { data: { records: RecordStatus[]; truncated: boolean } } };
  if (body.result.data.truncated) throw new Error(`runs.get ${runId}: more than 1000 records`);
  return body.result.data.records.map((r) => ({ tool: r.tool, args: r.args, status: r.status }));
}

/**
 * Fills in Tristate's status lies once every task has run: its FINAL intent records (after the
 * executor's own reconciliation) against the Tristate service's effect log read at the same time.
 */
async function scoreTristateStatusLies(
  env: ReplayEnvironment,
  replayId: string,
  results: readonly TaskResult[],
  concurrency: number,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < results.length) {
      const r = results[next++] as TaskResult;
      const [records, seen] = await Promise.all([
        runRecordsOf(env.executorUrl, env.adminKey, runIdOf(replayId, r.taskId)),
        observe(env.serviceUrls.tristate, `${r.domain}.${r.taskId}`),
      ]);
      r.scores.tristate.statusLies = countStatusLies(claimsOfRecords(records), seen.effects);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, results.length)) }, worker));
}

/** True when every write tool of the task has a probe in the catalog. */
export function isProbeable(task: ReplayTask, realism: RealismTable): boolean {
  return task.actions.every((a) => !a.write || hasProbe(realism, task.domain, a.name));
}

/** The run id of a task in a replay. */
export const runIdOf = (replayId: string, taskId: string): string => `${replayId}.${taskId}`;

/**
 * The Tristate agent's policy, patient enough to see an UNKNOWN through the longest settle window the
 * catalog declares: absence becomes proof only after it, and then the executor's sweeper (every 5 s,
 * probes spaced 0, 1, 3 s) settles the step. A real agent told "reconciliation scheduled" keeps asking
 * about the same step; one that stopped after the default 6 polls (9 s) would abandon tasks whose
 * remote lags longer. 20 s covers the write timeout (3 s), one sweeper interval and its probes.
 * @param settleMs - the catalog's settle window per write tool, ms.
 */
export function patientPolicy(
  settleMs: Record<string, number>,
  base: TristatePolicy = DEFAULT_TRISTATE_POLICY,
): TristatePolicy {
  const waitMs = Math.max(0, ...Object.values(settleMs)) + 20_000;
  return { ...base, maxPolls: Math.max(base.maxPolls, Math.ceil(waitMs / base.pollMs)) };
}

/**
 * Replays the tasks through the three agents (concurrently across tasks; the three agents of one
 * task at once, each on its own service), scores them and reads back the human queue.
 */
export async function replayTasks(
  env: ReplayEnvironment,
  tasks: readonly ReplayTask[],
  options: ReplayOptions,
): Promise<ReplayReport> {
  const started = Date.now();
  const replayId = options.replayId ?? `tau-${started.toString(36)}`;
  const execute = httpExecute(env.executorUrl, env.agentKey);
  const policy = options.policy ?? patientPolicy(env.settleMs);
  const baseline = options.baseline ?? DEFAULT_BASELINE_OPTIONS;
  const results: TaskResult[] = [];
  const runs = new Map<string, AgentRun>();
  const aborted: AbortedRun[] = [];
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const task = tasks[next++] as ReplayTask;
      const tenant = task.id;
      const segment = `${task.domain}.${tenant}`;
      const runId = runIdOf(replayId, task.id);
      const plan = options.abort ? abortPlanOf(task, options.abort.share, options.abort.seed) : null;
      const driver = plan ? abortDriver(env, plan, runId) : null;
      const [tri, retry, never] = await Promise.all([
        runTristateAgent(execute, task, runId, tenant, policy, driver ? { beforeCall: driver.beforeCall } : {}),
        runBaselineAgent("retry_any", env.serviceUrls.retry_any, task, tenant, baseline),
        runBaselineAgent("never_retry", env.serviceUrls.never_retry, task, tenant, baseline),
      ]);
      runs.set(task.id, tri);
      if (driver) aborted.push({ task, runId, run: tri, outcome: await driver.outcome() });
      const expected = expectedEffects(task.actions, task.oracle.outputs);
      const probeable = isProbeable(task, env.realism);
      const scores = {} as Record<AgentName, TaskScore>;
      for (const run of [tri, retry, never]) {
        const seen = await observe(env.serviceUrls[run.agent], segment);
        scores[run.agent] = scoreTask({
          run,
          oracleHash: task.oracle.state_hash_jcs,
          finalHash: seen.hash,
          expected,
          applied: seen.effects,
          probeable,
          // Tristate's claims are its final intent records, read after every task ran (below).
          ...(run.agent === "tristate" ? {} : { claims: claimsOfRun(run, task.actions) }),
        });
      }
      const result: TaskResult = {
        taskId: task.id,
        domain: task.domain,
        probeable,
        writes: task.actions.filter((a) => a.write).length,
        scores,
      };
      results.push(result);
      options.onTask?.(++done, tasks.length, result);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency, tasks.length)) }, worker));

  const target = { executorUrl: env.executorUrl, adminKey: env.adminKey, serviceUrl: env.serviceUrls.tristate };
  const judged = options.abort ? await judgeAbortedTasks(target, aborted, results, options.abort.share) : null;
  const humanQueue = await humanQueueOf(env.executorUrl, env.adminKey, `${replayId}.`);
  for (const item of humanQueue) {
    const taskId = item.runId.slice(replayId.length + 1);
    const r = results.find((x) => x.taskId === taskId);
    if (r) r.scores.tristate.humanQueueItems++;
  }
  await scoreTristateStatusLies(env, replayId, results, options.concurrency);
  const order = new Map(tasks.map((t, i) => [t.id, i]));
  results.sort((a, b) => (order.get(a.taskId) ?? 0) - (order.get(b.taskId) ?? 0));
  const all = results.flatMap((r) => AGENTS.map((a) => r.scores[a]));
  const totals = Object.fromEntries(AGENTS.map((a) => [a, totalsOf(a, all)])) as Record<AgentName, AgentTotals>;
  const t = totals.tristate;
  return {
    replayId,
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    machine: machine(),
    options: reportOptions(env, options.concurrency, tasks.length),
    database: env.databaseLabel,
    totals,
    targets: {
      probeableAllMatched: t.probeableMatched === t.probeableTasks,
      zeroDuplicates: t.duplicateEffects === 0,
      everyUnmatchedInHumanQueue: t.unmatchedNotQueued === 0,
      abortedRunsCorrect: !judged || judged.totals.incorrectRuns === 0,
    },
    aborts: judged?.totals ?? null,
    humanQueue,
    tasks: results,
  };
}

/** The machine the replay ran on. */
function machine(): ReplayReport["machine"] {
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? "unknown",
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
  };
}

/** The report's `options`: the fault timing and the catalog's settle windows. */
function reportOptions(env: ReplayEnvironment, concurrency: number, tasks: number): ReplayReport["options"] {
  return {
    faultRate: env.faults.rate,
    faultMix: env.faults.mix as Record<string, number>,
    lagMs: env.faults.lagMs,
    lagResponse: env.faults.lagResponse,
    hangMs: env.faults.hangMs,
    settleMs: env.settleMs,
    seed: env.faults.seed,
    concurrency,
    tasks,
  };
}
