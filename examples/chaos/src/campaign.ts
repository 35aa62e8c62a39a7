/**
 * The campaign: a temporary PostgreSQL cluster, the τ-bench domain service, executor replicas, and
 * rounds of agents driving tasks while the fault schedule runs; after each round the faults stop,
 * every replica comes back, the sweepers settle what they can, and the checker reads the result.
 */
import { createTauService, mulberry32, tauBenchDataDir } from "@tristate/example-tau-bench";
import { loadReplayTasks, REVERSALS, type ReplayTask } from "@tristate/example-tau-bench/replay";
import { type AbortAnswer, abortRaceOne, type LiveRun, raceHooks, sendAbort } from "./abort-race.ts";
import { type AgentPool, type AgentResult, runAgent } from "./agent.ts";
import { addViolations, checkRound, NO_VIOLATIONS, type TaskObservation, violationCount } from "./checker.ts";
import { killsTarget, openDatabasePath } from "./db-stall.ts";
import {
  addDeadlineTallies,
  type CallTiming,
  deadlineFailures,
  judgeRoundDeadlines,
  NO_DEADLINE_TALLY,
} from "./deadline-checks.ts";
import { emptyCounts, type FaultCounts, runSchedule } from "./faults.ts";
import { observeRound, operatorAction, waitSettled } from "./observe.ts";
import type { CampaignOptions } from "./options.ts";
import { createTempCluster, freePort, type TempCluster } from "./postgres.ts";
import { ReplicaSet } from "./replicas.ts";
import type { CampaignReport, RoundReport } from "./report.ts";
import { startExecutors } from "./setup.ts";

/** Fisher–Yates with the campaign's RNG. */
function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** True once every selected kind fired `kills` times (when `--kills` was given). */
function killsReached(options: CampaignOptions, counts: FaultCounts): boolean {
  return (
    options.kills !== undefined &&
    options.faults.every((k) => counts.fired[k] >= killsTarget(k, options.kills ?? 0, options.minutes))
  );
}

/**
 * Runs the campaign; `onRound` is told after each round. Stops after `minutes`, once every fault
 * kind fired `kills` times, or after the first round with a violation.
 */
export async function runCampaign(
  options: CampaignOptions,
  onRound: (round: RoundReport, counts: FaultCounts) => void,
): Promise<CampaignReport> {
  const started = Date.now();
  const random = mulberry32(options.seed);
  const tasks = loadReplayTasks(options.sources).filter((t) => t.actions.some((a) => a.write));
  const cluster = await createTempCluster();
  const database = await openDatabasePath(cluster, await freePort());
  const service = createTauService({
    dataDir: options.dataDir ?? tauBenchDataDir(),
    faults: options.baseFaults,
    maxInstances: 1_000_000,
  });
  const replicas = new ReplicaSet({
    ports: await Promise.all(Array.from({ length: options.replicas }, () => freePort())),
    env: {},
  });
  const counts = emptyCounts();
  const rounds: RoundReport[] = [];
  let total = NO_VIOLATIONS;
  let deadlinesTotal = NO_DEADLINE_TALLY;
  // Ctrl-C or a CI timeout: stop the replicas and remove the temporary cluster before leaving.
  const onSignal = () => {
    void replicas
      .stopAll()
      .then(() => database.close())
      .then(() => cluster.remove())
      .finally(() => process.exit(130));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  const unexpectedExits = () => replicas.replicas.reduce((n, r) => n + r.crashes.length, 0);
  try {
    const serviceUrl = await service.listen(0);
    const { agentKey, adminKey } = await startExecutors(options, cluster, database, replicas, serviceUrl);
    const pool: AgentPool = { urls: replicas.urls, agentKey, inFlight: 0 };
    let order: ReplayTask[] = [];
    // With `abortrace`, a share of the runs is a task with a booking (the one compensable tool), so
    // aborts race bookings too (τ-bench has 5 such tasks among its 500+).
    const bookings = tasks.filter((t) => t.actions.some((a) => REVERSALS[`${t.domain}.${a.name}`]));
    const bookingShare = options.faults.includes("abortrace") ? 0.15 : 0;
    const nextTask = (): ReplayTask => {
      if (bookings.length && random() < bookingShare)
        return bookings[Math.floor(random() * bookings.length)] as ReplayTask;
      if (order.length === 0) order = shuffled(tasks, random);
      return order.shift() as ReplayTask;
    };
    const deadline = started + options.minutes * 60_000;
    for (let round = 1; Date.now() < deadline && !killsReached(options, counts); round++) {
      const prefix = `chaos-${options.seed}-r${round}`;
      const runs: LiveRun[] = [];
      const timings: CallTiming[] = [];
      const fire = async (r: LiveRun): Promise<AbortAnswer> => {
        const first = Math.floor(random() * pool.urls.length);
        r.abort = await sendAbort(pool, adminKey, r.race?.via ?? "runs.abort", r.runId, first);
        return r.abort;
      };
      const roundStart = Date.now();
      // Agents still busy this long after the round's time stop after their current call (and say so).
      const cutoffMs = options.roundMs + 30_000;
      // Each slot is one agent running tasks back to back until the round's time is up.
      const agents = Promise.all(
        Array.from({ length: options.concurrency }, async (_, slot) => {
          for (let n = 0; n === 0 || Date.now() - roundStart < options.roundMs; n++) {
            const task = nextTask();
            const r = newRun(task, `${prefix}.s${slot}t${n}.${task.id}`, `r${round}s${slot}t${n}`);
            runs.push(r);
            const halt = () => (r.aborted ? "aborted" : Date.now() - roundStart > cutoffMs ? "timeout" : null);
            const hooks = { ...raceHooks(r, fire, random), onTiming: (t: CallTiming) => timings.push(t) };
            r.result = await runAgent(pool, r.task, r.runId, r.tenant, options.policy, halt, random, hooks);
          }
        }),
      );
      let agentsDone = false;
      void agents.then(() => {
        agentsDone = true;
      });
      const before = structuredClone(counts);
      const events = await runSchedule(
        options.faults,
        options.intervals,
        {
          replicas,
          cluster,
          database,
          service,
          pool,
          baseFaults: options.baseFaults,
          lagFaults: options.lagFaults,
          lagEpisodeMs: options.lagEpisodeMs,
          random,
          abortOne: async () => {
            const running = runs.filter((r) => !r.result && !r.aborted && !r.race);
            const r = running[Math.floor(random() * running.length)];
            if (!r) return null;
            r.aborted = true;
            return (await fire(r)).detail;
          },
          abortRaceOne: () => abortRaceOne(runs, fire, random),
          operatorOne: () => operatorAction(cluster.pool, pool.urls, adminKey, serviceUrl, prefix, random),
        },
        counts,
        () => agentsDone,
      );
      await agents;
      const faultMs = Date.now() - roundStart;
      await replicas.allUp();
      const { settle, observations } = await settleAndObserve(cluster.pool, serviceUrl, prefix, runs, options);
      const { violations, aborts, details, planted } = checkRound(observations);
      total = addViolations(total, violations);
      const skewOf = (url: string) => replicas.replicas.find((x) => x.url === url)?.skewMs ?? 0;
      const segments = runs.map((r) => ({ runId: r.runId, segment: `${r.task.domain}.${r.tenant}` }));
      const deadlines = await judgeRoundDeadlines(serviceUrl, segments, timings, skewOf);
      deadlinesTotal = addDeadlineTallies(deadlinesTotal, deadlines.tally);
      const report: RoundReport = {
        round,
        startedAt: new Date(roundStart).toISOString(),
        tasks: runs.length,
        faultMs,
        settleMs: settle.waitedMs,
        fired: Object.fromEntries(options.faults.map((k) => [k, counts.fired[k] - before.fired[k]])),
        killsInFlight: counts.killsInFlight - before.killsInFlight,
        backendsTerminated: counts.backendsTerminated - before.backendsTerminated,
        effects: observations.reduce((n, o) => n + o.effects.length, 0),
        laggedEffects: observations.reduce((n, o) => n + (o.lagged ?? 0), 0),
        records: observations.reduce((n, o) => n + o.records.length, 0),
        inHumanQueue: observations.reduce((n, o) => n + o.records.filter((r) => r.needsHuman).length, 0),
        stopped: countStops(runs.map((r) => r.result)),
        unanswered: runs.reduce((n, r) => n + (r.result?.unanswered ?? 0), 0),
        violations,
        deadlines: deadlines.tally,
        aborts,
        planted,
        unexpectedExits: unexpectedExits(),
        schedule: events,
        details: [...details, ...deadlines.details],
        failedRuns: observations
          .filter((o) => details.some((d) => d.startsWith(`${o.agent.runId}:`)))
          .map((o) => ({ runId: o.agent.runId, told: o.agent.told, records: o.records })),
      };
      rounds.push(report);
      onRound(report, counts);
      if (
        violationCount(violations) + deadlineFailures(deadlines.tally) > 0 ||
        !planted.duplicate ||
        !planted.gap ||
        !planted.abort
      )
        break;
    }
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    await replicas.stopAll();
    await database.close();
    await service.close().catch(() => {});
    await cluster.remove();
  }
  return {
    command: options.command,
    seed: options.seed,
    startedAt: new Date(started).toISOString(),
    durationMs: Date.now() - started,
    replicas: options.replicas,
    faults: options.faults,
    intervalsMs: options.intervals,
    rounds,
    counts,
    violations: total,
    deadlines: deadlinesTotal,
    unexpectedExits: unexpectedExits(),
    exits: replicas.replicas.flatMap((r) => r.crashes.map((c) => ({ replica: r.index, ...c }))),
  };
}

/** A fresh task run of a round. */
function newRun(task: ReplayTask, runId: string, tenant: string): LiveRun {
  return { task, runId, tenant, aborted: false, race: null, abort: null, inFlight: null, begun: 0, result: null };
}

/**
 * Waits until the round settled (and the undos of its recorded aborts), then reads every run's
 * records and effects; an aborted run carries when its abort was answered (null: never).
 */
async function settleAndObserve(
  db: TempCluster["pool"],
  serviceUrl: string,
  prefix: string,
  runs: readonly LiveRun[],
  options: CampaignOptions,
): Promise<{ settle: { waitedMs: number }; observations: TaskObservation[] }> {
  const isAborted = (r: LiveRun) => r.aborted || Boolean(r.race?.sent);
  const settle = await waitSettled(db, prefix, options.settleTimeoutMs, {
    runIds: runs.filter(isAborted).map((r) => r.runId),
    tools: Object.keys(REVERSALS),
  });
  const observations = await observeRound(
    db,
    serviceUrl,
    runs.map((r) => ({
      task: r.task,
      runId: r.runId,
      tenant: r.tenant,
      aborted: isAborted(r),
      ...(isAborted(r) ? { abortAnsweredAt: r.abort?.answeredAt ?? null } : {}),
      agent: r.result as AgentResult,
    })),
  );
  return { settle, observations };
}

function countStops(results: readonly (AgentResult | null)[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of results) {
    const why = r?.stopped ?? "completed";
    out[why] = (out[why] ?? 0) + 1;
  }
  return out;
}
