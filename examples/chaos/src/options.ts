/** Command-line options of `pnpm chaos`. */
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_FAULTS, type FaultConfig, invocationDir, tauBenchDataDir } from "@tristate/example-tau-bench";
import { type TaskSource, visibleSplits } from "@tristate/example-tau-bench/replay";
import type { AgentPolicy } from "./agent.ts";
import { DBSTALL_FIRINGS_PER_MINUTE, killsTarget } from "./db-stall.ts";
import { type ChaosFault, DEFAULT_INTERVALS_MS, FAULT_KINDS } from "./faults.ts";

/** Usage text. */
export const CHAOS_USAGE = `usage: pnpm chaos [options]
       pnpm chaos --scenario notify-kill   (alone: SIGKILL an executor mid-delivery of its notifications, < 60 s)
  --minutes N        how long the campaign runs (default 10); it ends after the round running then
  --kills N          also end once every selected fault kind fired N times; the kinds then fire often
                     enough to get there in a third of --minutes, and falling short is a failure (exit 3);
                     dbstall (10–60 s each) needs only min(N, ${DBSTALL_FIRINGS_PER_MINUTE} per minute of --minutes)
  --seed N           seed of the schedule, the task order and the remote's faults (default: random, printed)
  --replicas N       executor replicas, 1–3 (default 3)
  --faults LIST      kinds to inject, comma-separated (default all): ${FAULT_KINDS.join(",")}
  --tasks FILE       task file of the shared format (<domain>/tasks_<split>.json); repeatable
  --oracle FILE      its oracle file, one per --tasks in the same order (default: every visible split)
  --catalog FILE     the executor's catalog module (default: the τ-bench catalog, src/catalog.config.ts);
                     it reads the remote's URL from TRISTATE_CHAOS_SERVICE_URL, see the README
  --concurrency N    agents at once, each running tasks back to back (default 12)
  --round-seconds N  how long agents start new tasks in a round before it is settled and checked (default 45)
  --json FILE        write the whole report (every round and its schedule) there
  --repro FILE       where the reproduction of a failing round goes (default: the temp folder)
  --data-dir DIR     τ-bench data (default: TAU_BENCH_DATA_DIR, i.e. examples/tau-bench/data)`;

/** Parsed options. */
export interface CampaignOptions {
  command: string;
  minutes: number;
  kills?: number;
  seed: number;
  replicas: number;
  faults: ChaosFault[];
  intervals: Record<ChaosFault, number>;
  sources: TaskSource[];
  dataDir: string;
  /** The executor's catalog module (`TRISTATE_CONFIG` of every replica); absent: the τ-bench one. */
  catalog?: string;
  concurrency: number;
  /** How long agents start new tasks in a round, ms (faults run until the last one finished). */
  roundMs: number;
  json?: string;
  repro: string;
  policy: AgentPolicy;
  /** The remote's faults outside lag episodes, and during one. */
  baseFaults: FaultConfig;
  lagFaults: FaultConfig;
  lagEpisodeMs: number;
  sweepIntervalMs: number;
  settleTimeoutMs: number;
}

function int(flag: string, raw: string | undefined, min: number, max: number): number {
  const n = Number(raw);
  if (raw === undefined || raw.trim() === "" || !Number.isInteger(n) || n < min || n > max) {
    throw new Error(`--${flag} ${JSON.stringify(raw)}: must be an integer from ${min} to ${max}`);
  }
  return n;
}

/**
 * Parses argv.
 * @throws Error naming the bad option and its rule.
 */
export function parseChaosArgs(argv: string[]): CampaignOptions | { help: true } {
  const { values } = parseArgs({
    args: argv,
    options: {
      minutes: { type: "string", default: "10" },
      kills: { type: "string" },
      seed: { type: "string" },
      replicas: { type: "string", default: "3" },
      faults: { type: "string", default: FAULT_KINDS.join(",") },
      tasks: { type: "string", multiple: true, default: [] },
      oracle: { type: "string", multiple: true, default: [] },
      concurrency: { type: "string", default: "12" },
      "round-seconds": { type: "string", default: "45" },
      json: { type: "string" },
      repro: { type: "string" },
      "data-dir": { type: "string" },
      catalog: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
  });
  if (values.help) return { help: true };
  const cwd = invocationDir();
  const minutes = Number(values.minutes);
  if (!Number.isFinite(minutes) || minutes <= 0 || minutes > 24 * 60)
    throw new Error(`--minutes ${JSON.stringify(values.minutes)}: must be a number above 0, at most 1440`);
  const kills = values.kills === undefined ? undefined : int("kills", values.kills, 1, 1_000_000);
  const seed =
    values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : int("seed", values.seed, 0, 2 ** 31 - 1);
  const faults = values.faults
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const f of faults) {
    if (!(FAULT_KINDS as readonly string[]).includes(f))
      throw new Error(
        `--faults ${JSON.stringify(values.faults)}: unknown kind ${JSON.stringify(f)} (kinds: ${FAULT_KINDS.join(", ")})`,
      );
  }
  const dataDir = values["data-dir"] ? resolve(cwd, values["data-dir"]) : tauBenchDataDir();
  if (values.tasks.length !== values.oracle.length) throw new Error("give one --oracle per --tasks, in the same order");
  const sources = values.tasks.length
    ? values.tasks.map((t, i) => ({ tasks: resolve(cwd, t), oracle: resolve(cwd, values.oracle[i] as string) }))
    : visibleSplits(dataDir);
  if (sources.length === 0) throw new Error(`no task files given and none found in ${dataDir}`);
  for (const s of sources)
    for (const f of [s.tasks, s.oracle]) if (!existsSync(f)) throw new Error(`no such file: ${f}`);
  const catalog = values.catalog ? resolve(cwd, values.catalog) : undefined;
  if (catalog && !existsSync(catalog)) throw new Error(`--catalog ${values.catalog}: no such file`);
  const intervals = { ...DEFAULT_INTERVALS_MS };
  if (kills !== undefined) {
    // N firings of each kind in about a third of the time: the rest is start-up, the round's tail,
    // settling and checking.
    for (const k of FAULT_KINDS)
      intervals[k] = Math.min(intervals[k], (minutes * 60_000 * 0.35) / killsTarget(k, kills, minutes));
  }
  const baseFaults: FaultConfig = { ...DEFAULT_FAULTS, rate: 0.15, seed, hangMs: 4000, lagMs: 2000 };
  return {
    command: ["pnpm chaos", ...argv].join(" "),
    minutes,
    ...(kills !== undefined ? { kills } : {}),
    seed,
    replicas: int("replicas", values.replicas, 1, 3),
    faults: [...new Set(faults)] as ChaosFault[],
    intervals,
    sources,
    dataDir,
    ...(catalog ? { catalog } : {}),
    concurrency: int("concurrency", values.concurrency, 1, 128),
    roundMs: int("round-seconds", values["round-seconds"], 1, 3600) * 1000,
    ...(values.json ? { json: resolve(cwd, values.json) } : {}),
    repro: values.repro ? resolve(cwd, values.repro) : join(tmpdir(), `tristate-chaos-${seed}.repro.json`),
    policy: { turnMs: 10_000, maxAttempts: 5, pollMs: 1000, maxPolls: 40, taskMs: 180_000 },
    baseFaults,
    // Lag beyond a call's probe rounds (0 + 1 + 2 s): the catalog declares it, so absence is proof only after it.
    lagFaults: { ...baseFaults, rate: 0.5, mix: { lag: 3, hang: 1 }, lagMs: 6000 },
    lagEpisodeMs: 3000,
    sweepIntervalMs: 1000,
    settleTimeoutMs: 300_000,
  };
}
