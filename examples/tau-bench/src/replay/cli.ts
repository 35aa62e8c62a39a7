/** Command-line options of `pnpm tau:replay`. */
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { z } from "zod";
import { DEFAULT_FAULTS, type FaultConfig, NAMED_FAULT_MIXES, parseFaultMix } from "../service/faults.ts";
import { invocationDir, tauBenchDataDir } from "../settings.ts";
import type { DatabaseChoice } from "./environment.ts";
import type { TaskSource } from "./replay.ts";

/** Usage text. */
export const REPLAY_USAGE = `usage: pnpm tau:replay [options]
  --tasks FILE        task file of the shared format (<domain>/tasks_<split>.json); repeatable
  --oracle FILE       its oracle file (<domain>/oracle_<split>.json); one per --tasks, same order
                      (default: every visible split in the data folder: retail train + dev, airline test)
  --fault-rate R      probability that a write request gets a fault (default 0.2)
  --fault-mix MIX     weights K=W,.. of refuse,503,hang,504,reset,lag (default all 1), or a named mix:
                      all, lag-heavy (= lag=4,hang=2,504=1,reset=1,503=1,refuse=1)
  --lag-ms N          lag: how long an applied effect stays invisible to lookups, ms (default 2000)
  --lag-response R    lag: what the client gets: ok, 504 or hang (default 504)
  --hang-ms N         hang: how long the answer is withheld before the socket is dropped, ms (default 10000)
  --unbounded-lag     the catalog declares the services' lag unbounded: no settle window, so an unsafe
                      tool's UNKNOWN waits for a human instead of being resent (default: the window is
                      derived from the fault settings: processing latency + lag-ms if lag can be drawn + 500 ms)
  --abort-share R     abort fault: this share of the runs (0–1, drawn from the seed) is aborted mid-plan
                      while one of its write calls is in flight — half through runs.abort, half through
                      runs.operatorAbort — and the agent goes on with its plan (default 0: none)
  --seed N            fault RNG seed (default 1)
  --report FILE       write the JSON report there
  --limit N           only the first N tasks
  --concurrency K     tasks replayed at once (default 16)
  --service-port N    ports of the three domain services: N (Tristate's), N+1, N+2 (default 0: any free ports)
  --executor-port N   port of the executor API (default 0: any free port)
  --db CHOICE         executor database: auto (DATABASE_URL, else a fresh test database on
                      TRISTATE_TEST_DATABASE_URL's server, else embedded), embedded, test (default auto)
  --data-dir DIR      τ-bench data (default: TAU_BENCH_DATA_DIR, i.e. examples/tau-bench/data)`;

/** Longest `--lag-ms` / `--hang-ms`, ms (10 minutes). */
export const MAX_FAULT_DELAY_MS = 600_000;

/** Parsed options. */
export interface ReplayArgs {
  sources: TaskSource[];
  faults: Partial<FaultConfig>;
  report?: string;
  limit?: number;
  concurrency: number;
  /** First port of the three domain services (0 = any free ports). */
  servicePort: number;
  /** Port of the executor API (0 = any free port). */
  executorPort: number;
  /** The catalog declares the services' lag unbounded (no settle window). */
  unboundedLag: boolean;
  /** The abort fault: the share of runs aborted mid-plan (0: none). */
  abortShare: number;
  database: DatabaseChoice;
  dataDir: string;
  /** Where relative paths are resolved (the directory `pnpm` was invoked from). */
  cwd: string;
}

/** The visible splits of the shared data folder. */
export function visibleSplits(dataDir: string): TaskSource[] {
  return [
    ["retail", "train"],
    ["retail", "dev"],
    ["airline", "test"],
  ]
    .map(([d, s]) => ({
      tasks: join(dataDir, d as string, `tasks_${s}.json`),
      oracle: join(dataDir, d as string, `oracle_${s}.json`),
    }))
    .filter((x) => existsSync(x.tasks) && existsSync(x.oracle));
}

/**
 * Parses argv.
 * @throws Error with a message naming the bad option.
 */
export function parseReplayArgs(argv: string[]): ReplayArgs | { help: true } {
  const { values } = parseArgs({
    args: argv,
    options: {
      tasks: { type: "string", multiple: true, default: [] },
      oracle: { type: "string", multiple: true, default: [] },
      "fault-rate": { type: "string", default: "0.2" },
      "fault-mix": { type: "string" },
      "abort-share": { type: "string", default: "0" },
      seed: { type: "string", default: "1" },
      report: { type: "string" },
      limit: { type: "string" },
      concurrency: { type: "string", default: "16" },
      "lag-ms": { type: "string", default: String(DEFAULT_FAULTS.lagMs) },
      "lag-response": { type: "string", default: DEFAULT_FAULTS.lagResponse },
      "hang-ms": { type: "string", default: String(DEFAULT_FAULTS.hangMs) },
      "unbounded-lag": { type: "boolean", default: false },
      "service-port": { type: "string", default: "0" },
      "executor-port": { type: "string", default: "0" },
      db: { type: "string", default: "auto" },
      "data-dir": { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
  });
  if (values.help) return { help: true };
  const cwd = invocationDir();
  const dataDir = values["data-dir"] ? resolve(cwd, values["data-dir"]) : tauBenchDataDir();
  if (values.tasks.length !== values.oracle.length) throw new Error("give one --oracle per --tasks, in the same order");
  const sources = values.tasks.length
    ? values.tasks.map((t, i) => ({ tasks: resolve(cwd, t), oracle: resolve(cwd, values.oracle[i] as string) }))
    : visibleSplits(dataDir);
  if (sources.length === 0) throw new Error(`no task files given and none found in ${dataDir}`);
  const num = (flag: string, raw: string | undefined, schema: z.ZodType<number>): number => {
    const text = (raw ?? "").trim();
    if (text === "") throw new Error(`--${flag} "": needs a value`);
    if (Number.isNaN(Number(text))) throw new Error(`--${flag} ${JSON.stringify(raw)}: must be a number`);
    const parsed = schema.safeParse(Number(text));
    if (!parsed.success)
      throw new Error(`--${flag} ${JSON.stringify(raw)}: ${parsed.error.issues[0]?.message ?? "is invalid"}`);
    return parsed.data;
  };
  let mix = DEFAULT_FAULTS.mix;
  if (values["fault-mix"] !== undefined) {
    try {
      mix = parseFaultMix(values["fault-mix"]);
    } catch (error) {
      const issue = (error as { issues?: { path?: unknown[]; message: string }[] }).issues?.[0];
      const why = issue
        ? `${issue.path?.length ? `${issue.path.join(".")}: ` : ""}${issue.message}`
        : error instanceof Error
          ? error.message
          : String(error);
      throw new Error(
        `--fault-mix ${JSON.stringify(values["fault-mix"])}: ${why} (e.g. refuse=1,503=1,hang=1,504=1,reset=1,lag=1, or a name: ${Object.keys(NAMED_FAULT_MIXES).join(", ")})`,
      );
    }
  }
  const delayMs = (flag: string, raw: string | undefined): number => {
    const rule = `must be an integer from 0 to ${MAX_FAULT_DELAY_MS} (ms)`;
    return num(flag, raw, z.number().int(rule).min(0, rule).max(MAX_FAULT_DELAY_MS, rule));
  };
  const lagMs = delayMs("lag-ms", values["lag-ms"]);
  const hangMs = delayMs("hang-ms", values["hang-ms"]);
  const lagResponse = z.enum(["ok", "504", "hang"]).safeParse(values["lag-response"]);
  if (!lagResponse.success)
    throw new Error(`--lag-response ${JSON.stringify(values["lag-response"])}: must be ok, 504 or hang`);
  const serviceRule = "must be an integer from 0 to 65533 (0 = any free ports; the services use N, N+1 and N+2)";
  const servicePort = num(
    "service-port",
    values["service-port"],
    z.number().int(serviceRule).min(0, serviceRule).max(65533, serviceRule),
  );
  const executorRule = "must be an integer from 0 to 65535 (0 = any free port)";
  const executorPort = num(
    "executor-port",
    values["executor-port"],
    z.number().int(executorRule).min(0, executorRule).max(65535, executorRule),
  );
  if (servicePort !== 0 && executorPort >= servicePort && executorPort <= servicePort + 2) {
    throw new Error(
      `--executor-port ${executorPort}: must differ from the services' ports ${servicePort}–${servicePort + 2} (--service-port ${servicePort})`,
    );
  }
  const database = z.enum(["auto", "embedded", "test"]).safeParse(values.db);
  if (!database.success) throw new Error(`--db ${JSON.stringify(values.db)}: must be auto, embedded or test`);
  for (const source of sources) {
    for (const file of [source.tasks, source.oracle]) {
      if (!existsSync(file)) throw new Error(`no such file: ${file}`);
    }
  }
  const report = values.report ? resolve(cwd, values.report) : undefined;
  if (report && !existsSync(dirname(report)))
    throw new Error(`--report ${values.report}: the folder ${dirname(report)} does not exist`);
  return {
    sources,
    faults: {
      rate: num(
        "fault-rate",
        values["fault-rate"],
        z.number().min(0, "must be from 0 to 1").max(1, "must be from 0 to 1"),
      ),
      mix,
      seed: num("seed", values.seed, z.number().int("must be an integer")),
      lagMs,
      hangMs,
      lagResponse: lagResponse.data,
    },
    ...(values.report ? { report: values.report } : {}),
    ...(values.limit !== undefined
      ? { limit: num("limit", values.limit, z.number().int("must be an integer").positive("must be at least 1")) }
      : {}),
    concurrency: num(
      "concurrency",
      values.concurrency,
      z.number().int("must be an integer").min(1, "must be from 1 to 256").max(256, "must be from 1 to 256"),
    ),
    servicePort,
    executorPort,
    unboundedLag: values["unbounded-lag"],
    abortShare: num(
      "abort-share",
      values["abort-share"],
      z.number().min(0, "must be from 0 to 1").max(1, "must be from 0 to 1"),
    ),
    database: database.data,
    dataDir,
    cwd,
  };
}
