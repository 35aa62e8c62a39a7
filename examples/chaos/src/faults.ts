/**
 * The fault schedule of a round: each selected kind fires at uniform random moments (its mean
 * interval × [0.5, 1.5)) drawn from the campaign's seeded RNG, and every firing is logged with its
 * moment and target, so a reproduction names what happened when.
 */
import type { FaultConfig, TauService } from "@tristate/example-tau-bench";
import type { AgentPool } from "./agent.ts";
import { type DatabasePath, drawStallMs } from "./db-stall.ts";
import type { TempCluster } from "./postgres.ts";
import type { ReplicaSet } from "./replicas.ts";

/** The fault kinds of `--faults`. */
export const FAULT_KINDS = [
  "kill",
  "pgkill",
  "pgcrash",
  "lag",
  "skew",
  "abort",
  "abortrace",
  "operator",
  "dbstall",
] as const;
/** One of {@link FAULT_KINDS}. */
export type ChaosFault = (typeof FAULT_KINDS)[number];

/** Mean interval between two firings of each kind, ms (the long campaign's pace). */
export const DEFAULT_INTERVALS_MS: Record<ChaosFault, number> = {
  kill: 2000,
  pgkill: 8000,
  pgcrash: 9000,
  lag: 8000,
  skew: 10000,
  abort: 6000,
  abortrace: 6000,
  operator: 4000,
  // A stall lasts 10–60 s and stalls never overlap: the first of a round comes 15–45 s in, so a
  // 45-s round sees one.
  dbstall: 60_000,
};

/** One firing, as logged in the schedule. */
export interface FaultEvent {
  /** ms since the round started. */
  t: number;
  kind: ChaosFault;
  /** What it hit and what came of it (replica, skew, backends terminated, run id, action …). */
  detail: string;
}

/** What the fault actions need. */
export interface FaultTargets {
  replicas: ReplicaSet;
  cluster: TempCluster;
  /** The proxy between the replicas and the cluster (`dbstall`). */
  database: DatabasePath;
  service: TauService;
  pool: AgentPool;
  /** The remote's normal faults, and those of a lag episode (lag longer than a call's probe rounds). */
  baseFaults: FaultConfig;
  lagFaults: FaultConfig;
  /** Length of a lag episode, ms. */
  lagEpisodeMs: number;
  /** Aborts one running saga; resolves to what happened (or null when no run was running). */
  abortOne(): Promise<string | null>;
  /**
   * Aborts one run while one of its calls is in flight (`runs.abort` or `runs.operatorAbort`), its
   * agent going on; resolves to what happened (or null: no call in flight to race now).
   */
  abortRaceOne(): Promise<string | null>;
  /** One operator action racing the sweeper; resolves to what it did (or null: nothing to act on). */
  operatorOne(): Promise<string | null>;
  random: () => number;
}

/** Counters of a campaign. */
export interface FaultCounts {
  fired: Record<ChaosFault, number>;
  /** Executor SIGKILLs of a serving replica with at least one agent call in flight. */
  killsInFlight: number;
  /** Executor SIGKILLs of a replica still starting (before it served). */
  killsStarting: number;
  /** Backends terminated by `pgkill`. */
  backendsTerminated: number;
}

/** Zero counters. */
export function emptyCounts(): FaultCounts {
  return {
    fired: { kill: 0, pgkill: 0, pgcrash: 0, lag: 0, skew: 0, abort: 0, abortrace: 0, operator: 0, dbstall: 0 },
    killsInFlight: 0,
    killsStarting: 0,
    backendsTerminated: 0,
  };
}

/** Kinds of which one firing runs at a time (the database has one postmaster; lag episodes and stalls do not nest). */
const EXCLUSIVE = new Set<ChaosFault>(["pgkill", "pgcrash", "lag", "dbstall"]);

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Runs the schedule until `stop()` says so; resolves with the events once every firing finished. */
export async function runSchedule(
  kinds: readonly ChaosFault[],
  intervals: Record<ChaosFault, number>,
  targets: FaultTargets,
  counts: FaultCounts,
  stop: () => boolean,
): Promise<FaultEvent[]> {
  const started = Date.now();
  const events: FaultEvent[] = [];
  const busy = new Set<ChaosFault>();
  const pending: Promise<void>[] = [];
  const next = new Map<ChaosFault, number>();
  const draw = (k: ChaosFault) => intervals[k] * (0.5 + targets.random());
  for (const k of kinds) next.set(k, draw(k) / 2);
  let pgDown = false;
  while (!stop()) {
    const now = Date.now() - started;
    for (const kind of kinds) {
      if (now < (next.get(kind) ?? 0) || (EXCLUSIVE.has(kind) && busy.has(kind))) continue;
      // A kill whose moment came while no replica has a process waits for the next one started.
      const killable = targets.replicas.replicas.some((r) => r.child && !r.busy);
      if ((kind === "kill" || kind === "skew") && !killable) continue;
      next.set(kind, now + draw(kind));
      if ((kind === "pgkill" || kind === "pgcrash") && pgDown) continue;
      busy.add(kind);
      const log = (detail: string) => {
        events.push({ t: now, kind, detail });
        counts.fired[kind]++;
      };
      const action = async (): Promise<void> => {
        const { replicas } = targets;
        // Any moment of a process's life: serving, or still starting (migrating, connecting).
        const up = replicas.replicas.filter((r) => r.child && !r.busy);
        switch (kind) {
          case "kill":
          case "skew": {
            const r = up[Math.floor(targets.random() * up.length)];
            if (!r) return; // every replica is still starting: nothing to kill at this moment
            const inFlight = r.starting ? 0 : targets.pool.inFlight;
            if (inFlight > 0) counts.killsInFlight++;
            if (r.starting) counts.killsStarting++;
            const skew =
              kind === "skew" ? Math.round((targets.random() < 0.5 ? -1 : 1) * (500 + targets.random() * 4500)) : 0;
            log(
              `replica ${r.index}${skew ? ` restarted with clock ${skew > 0 ? "+" : ""}${skew} ms` : ""}, ${inFlight} calls in flight`,
            );
            await replicas.killAndRestart(r, skew);
            return;
          }
          case "pgkill": {
            const n = await targets.cluster.terminateBackends().catch(() => -1);
            if (n < 0) return;
            counts.backendsTerminated += n;
            log(`${n} backends terminated`);
            return;
          }
          case "pgcrash": {
            pgDown = true;
            try {
              const down = await targets.cluster.crash();
              log(`immediate shutdown + start, down ${down} ms`);
            } finally {
              pgDown = false;
            }
            return;
          }
          case "lag": {
            // An episode never outlasts the pace of its kind (episodes do not nest).
            const episodeMs = Math.round(Math.min(targets.lagEpisodeMs, intervals.lag * 0.8));
            targets.service.setFaults(targets.lagFaults);
            log(
              `remote: ${episodeMs} ms of ${Math.round(targets.lagFaults.rate * 100)} % lag/hang, lag ${targets.lagFaults.lagMs} ms`,
            );
            await sleep(episodeMs);
            targets.service.setFaults(targets.baseFaults);
            return;
          }
          case "dbstall": {
            const { proxy } = targets.database;
            const stallMs = drawStallMs(targets.random);
            log(
              `database stalled ${stallMs} ms (forwarding stopped, ${proxy.connections()} connections held open), ${targets.pool.inFlight} calls in flight`,
            );
            await proxy.stallFor(stallMs);
            return;
          }
          case "abort":
          case "abortrace":
          case "operator": {
            const what = await (kind === "abort"
              ? targets.abortOne()
              : kind === "abortrace"
                ? targets.abortRaceOne()
                : targets.operatorOne());
            if (what) log(what);
            else next.set(kind, Date.now() - started + 250); // nothing to act on yet: look again soon
            return;
          }
        }
      };
      const p = action()
        .catch((error: unknown) => {
          events.push({
            t: now,
            kind,
            detail: `fault action failed: ${error instanceof Error ? error.message : String(error)}`,
          });
        })
        .finally(() => busy.delete(kind));
      pending.push(p);
    }
    await sleep(50);
  }
  await Promise.all(pending);
  targets.service.setFaults(targets.baseFaults);
  targets.database.proxy.resume();
  return events.sort((a, b) => a.t - b.t);
}
