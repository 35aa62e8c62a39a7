/** Command-line options of `pnpm tau:replay`. */
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { z } from "zod";
import { DEFAULT_FAULTS, type FaultConfig, parseFaultMix } from "../service/faults.ts";
import { invocationDir, tauBenchDataDir } from "../settings.ts";
import type { DatabaseChoice } from "./environment.ts";
import type { TaskSource } from "./replay.ts";

/** Usage text. */
export const REPLAY_USAGE = `usage: pnpm tau:replay [options]
  --tasks FILE        task file of the shared format (<domain>/tasks_<split>.json); repeatable
  --oracle FILE       its oracle file (<domain>/oracle_<split>.json); one per --tasks, same order
                      (default: every visible split in the data folder: retail train + dev, airline test)
  --fault-rate R      probability that a write request gets a fault (default 0.2)
  --fault-mix K=W,..  weights of refuse,503,hang,504,reset,lag (default all 1)
  --seed N            fault RNG seed (default 1)
  --report FILE       write the JSON report there
  --limit N           only the first N tasks
  --concurrency K     tasks replayed at once (default 16)
  --db CHOICE         executor database: auto (DATABASE_URL, else a fresh test database on
                      TRISTATE_TEST_DATABASE_URL's server, else embedded), embedded, test (default auto)
  --data-dir DIR      τ-bench data (default: TAU_BENCH_DATA_DIR, i.e. ../shared/data/tau-bench)`;

/** Parsed options. */
export interface ReplayArgs {
  sources: TaskSource[];
  faults: Partial<FaultConfig>;
  report?: string;
  limit?: number;
  concurrency: number;
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
      seed: { type: "string", default: "1" },
      report: { type: "string" },
      limit: { type: "string" },
      concurrency: { type: "string", default: "16" },
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
        `--fault-mix ${JSON.stringify(values["fault-mix"])}: ${why} (e.g. refuse=1,503=1,hang=1,504=1,reset=1,lag=1)`,
      );
    }
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
    database: database.data,
    dataDir,
    cwd,
  };
}
