import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { REPO_ROOT } from "@tristate/db";
import type { PhaseFigures } from "./load.ts";

/** What one `pnpm bench:agents` run measured, as written to `bench-results/agents-<agents>.json`. */
export interface AgentsRun {
  /** ISO time the run started. */
  startedAt: string;
  /** `git rev-parse HEAD`, and the files of packages/core, packages/db and apps/executor changed but not committed. */
  code: { commit: string; uncommitted: string[] };
  settings: {
    agents: number;
    /** Each call's `budgetMs`. */
    budgetMs: number;
    /** The executor's reserve (`DEFAULT_RESERVE_MS`): every call should answer by budget − reserve. */
    reserveMs: number;
    /** Measured window of the service phase, s (after `warmupSeconds`). */
    seconds: number;
    floorSeconds: number;
    warmupSeconds: number;
    /** The remote's latency, uniform, ms. */
    remoteLatencyMs: { min: number; max: number };
    /** Loopback source addresses the agents are spread over. */
    sourceAddresses: number;
    /** Settings given to the service (all others are its defaults). */
    serviceEnv: Record<string, string>;
  };
  /** The agents through the service (`calls.execute` with the real client). */
  service: PhaseFigures & {
    /** Calls answered more than `budgetMs` after they were sent (goal 0). */
    afterDeadline: { count: number; share: number };
    /** Calls answered more than `budgetMs − reserveMs` after they were sent (the executor's own rule: 0). */
    afterDeadlineMinusReserve: { count: number; share: number };
    outcomes: Record<string, number>;
    codes: Record<string, number>;
  };
  /** The same agents POSTing straight to the remote (no Tristate). */
  floor: PhaseFigures & { outcomes: Record<string, number> };
  /** Service ÷ floor: p50, p99 and throughput. */
  ratio: { p50: number; p99: number; throughput: number };
  /** Counted at the remote for the service phase's order ids (warm-up included). */
  effects: {
    total: number;
    /** Effects beyond the first for one order id (goal 0). */
    duplicates: number;
    /** Calls answered FAILED_NO_EFFECT whose effect the remote has anyway (goal 0). */
    afterNoEffect: number;
    /** Calls answered SUCCEEDED with no effect at the remote (goal 0). */
    succeededWithoutEffect: number;
  };
  /** 1/5/15-minute load averages (null where unknown). */
  load: { start: number[] | null; afterFloor: number[] | null; end: number[] | null; peak1m: number | null };
  node: string;
  totalSeconds: number;
}

/** The commit and the uncommitted files of the packages a call runs through (other engineers share the tree). */
export function codeState(): AgentsRun["code"] {
  const git = (...args: string[]) => execFileSync("git", args, { cwd: REPO_ROOT, encoding: "utf8" }).trim();
  try {
    const uncommitted = git("status", "--porcelain", "--", "packages/core", "packages/db", "apps/executor")
      .split("\n")
      .filter(Boolean)
      .map((line) => line.slice(3));
    return { commit: git("rev-parse", "HEAD"), uncommitted };
  } catch {
    return { commit: "unknown", uncommitted: [] };
  }
}

const ms = (v: number) => v.toFixed(1);
const pct = (v: number) => `${(v * 100).toFixed(2)} %`;

/** Writes `bench-results/agents-<agents>.json` and prints the table; returns the JSON's path. */
export async function writeAgentsReport(run: AgentsRun): Promise<string> {
  await mkdir(join(REPO_ROOT, "bench-results"), { recursive: true });
  const path = join(REPO_ROOT, "bench-results", `agents-${run.settings.agents}.json`);
  await writeFile(path, `${JSON.stringify(run, null, 2)}\n`);
  const { service: s, floor: f, ratio: r, settings } = run;
  const lines = [
    "",
    `${settings.agents} concurrent agents, budgetMs ${settings.budgetMs}, remote latency ${settings.remoteLatencyMs.min}–${settings.remoteLatencyMs.max} ms uniform; commit ${run.code.commit.slice(0, 7)}${run.code.uncommitted.length ? ` + ${run.code.uncommitted.length} uncommitted file(s)` : ""}`,
    "",
    "| variant | calls | calls/s | p50 ms | p99 ms | max ms | after deadline | after deadline − reserve |",
    "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    `| through the service | ${s.calls} | ${s.callsPerSecond.toFixed(0)} | ${ms(s.p50Ms)} | ${ms(s.p99Ms)} | ${ms(s.maxMs)} | ${pct(s.afterDeadline.share)} (${s.afterDeadline.count}) | ${pct(s.afterDeadlineMinusReserve.share)} (${s.afterDeadlineMinusReserve.count}) |`,
    `| floor: straight to the remote | ${f.calls} | ${f.callsPerSecond.toFixed(0)} | ${ms(f.p50Ms)} | ${ms(f.p99Ms)} | ${ms(f.maxMs)} | | |`,
    `| service ÷ floor | | ${r.throughput.toFixed(2)}× | ${r.p50.toFixed(2)}× | ${r.p99.toFixed(2)}× | | | |`,
    "",
    `outcomes: ${JSON.stringify(s.outcomes)}  codes: ${JSON.stringify(s.codes)}`,
    `floor outcomes: ${JSON.stringify(f.outcomes)}`,
    `effects at the remote: ${run.effects.total}, duplicates ${run.effects.duplicates}, after FAILED_NO_EFFECT ${run.effects.afterNoEffect}, SUCCEEDED without effect ${run.effects.succeededWithoutEffect}`,
    `load average: start ${run.load.start?.join(" ")}, after floor ${run.load.afterFloor?.join(" ")}, end ${run.load.end?.join(" ")}, peak 1-min ${run.load.peak1m}`,
    `drain after the window: ${ms(s.drainMs)} ms; total ${run.totalSeconds.toFixed(1)} s → ${path}`,
    "",
  ];
  process.stdout.write(lines.join("\n"));
  return path;
}
