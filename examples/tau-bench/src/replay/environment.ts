/**
 * What a replay needs running: three τ-bench services with the same faults (one per agent, so every
 * agent meets the same fault stream for the same requests), and the Tristate executor service
 * in-process with the τ-bench catalog on a database of its own, plus an agent and an admin key.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AnyTool } from "@tristate/core";
import { createTestDatabase } from "@tristate/db";
import { readEnv } from "@tristate/executor/env";
import { type RunningService, startService } from "@tristate/executor/service";
import { tauBenchTools } from "../catalog/tools.ts";
import { DEFAULT_FAULTS, type FaultConfig } from "../service/faults.ts";
import { createTauService, type TauService } from "../service/http-service.ts";
import type { RealismTable } from "../service/realism.ts";
import { databaseUrlSetting, tauBenchDataDir } from "../settings.ts";
import type { AgentName } from "./agents.ts";

/** Where the executor keeps its intent log during a replay. */
export type DatabaseChoice =
  /** `DATABASE_URL` if set, else a fresh database on the test server (`createTestDatabase`), else embedded. */
  | "auto"
  /** A fresh embedded PostgreSQL (PGlite) in a temporary folder, removed afterwards. */
  | "embedded"
  /** A fresh database on `TRISTATE_TEST_DATABASE_URL`'s server, dropped afterwards. */
  | "test"
  /** The embedded database in its default folder (`.tristate/pgdata`), kept: what `npm start` uses. */
  | "default";

/** Options of {@link startReplayEnvironment}. */
export interface EnvironmentOptions {
  /** Fault injection on write requests (rate, mix, seed, …). */
  faults: Partial<FaultConfig>;
  /** Instances per domain the services must hold (one per task and agent). */
  maxInstances: number;
  /** Database of the executor. @default "auto" */
  database?: DatabaseChoice;
  /** With `database: "default"`: the embedded database's folder (default: the executor's, `.tristate/pgdata`). */
  embeddedDataDir?: string;
  /** τ-bench data folder. Default: the `TAU_BENCH_DATA_DIR` setting. */
  dataDir?: string;
  /** Port of the executor API (0 = any free port). @default 0 */
  port?: number;
  /**
   * First port of the three domain services: Tristate's on `servicePort`, "retry on any error"'s on
   * `servicePort + 1`, "never retry"'s on `servicePort + 2` (0 = any free ports). @default 0
   */
  servicePort?: number;
  /**
   * Declare the services' lookup lag unbounded in the catalog (`timing: "unbounded"`): no tool gets
   * `settleMs`, so an `unsafe` tool's UNKNOWN waits for a human instead of being resent on absence.
   * Default: the settle window derived from `faults` (see `src/catalog/settle.ts`).
   */
  unboundedLag?: boolean;
  /** Log level of the executor service. @default "warn" */
  logLevel?: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
  /** Extra tools for the executor (the demo's worked example). */
  extraTools?: AnyTool[];
}

/** A running replay environment. */
export interface ReplayEnvironment {
  /** τ-bench service URL per agent. */
  serviceUrls: Record<AgentName, string>;
  /** The realism table the services use and the catalog follows. */
  realism: RealismTable;
  executor: RunningService;
  /** Executor API base URL. */
  executorUrl: string;
  agentKey: string;
  adminKey: string;
  /** Which database the executor uses, in words. */
  databaseLabel: string;
  /** The effective fault configuration. */
  faults: FaultConfig;
  /** The settle window (ms) the catalog declares per write tool (`<domain>.<tool>`); none when lag is unbounded. */
  settleMs: Record<string, number>;
  /** Stops the executor and the services, and removes a temporary database. */
  close(): Promise<void>;
}

async function chooseDatabase(
  choice: DatabaseChoice,
  embeddedDataDir?: string,
): Promise<{
  env: Record<string, string>;
  label: string;
  cleanup: () => Promise<void>;
}> {
  const url = databaseUrlSetting();
  if (choice === "default")
    return embeddedDataDir
      ? {
          env: { TRISTATE_DATA_DIR: embeddedDataDir },
          label: `the embedded PostgreSQL (PGlite) in ${embeddedDataDir}`,
          cleanup: async () => {},
        }
      : {
          env: {},
          label: "the embedded PostgreSQL (PGlite) default (TRISTATE_DATA_DIR, else .tristate/pgdata)",
          cleanup: async () => {},
        };
  if ((choice === "auto" && url) || choice === "test") {
    if (choice === "auto" && url)
      return { env: { DATABASE_URL: url }, label: "PostgreSQL at DATABASE_URL", cleanup: async () => {} };
  }
  if (choice === "auto" || choice === "test") {
    try {
      const db = await createTestDatabase();
      return { env: { DATABASE_URL: db.url }, label: `PostgreSQL test database ${db.name}`, cleanup: () => db.drop() };
    } catch (error) {
      if (choice === "test") throw error;
    }
  }
  const dir = await mkdtemp(join(tmpdir(), "tau-replay-pg-"));
  return {
    env: { TRISTATE_DATA_DIR: dir },
    label: `embedded PostgreSQL (PGlite) in ${dir}`,
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/**
 * Starts three τ-bench services with the same fault configuration and the executor service.
 * @throws when the data is missing, a port is taken or the database cannot be opened.
 */
export async function startReplayEnvironment(options: EnvironmentOptions): Promise<ReplayEnvironment> {
  const dataDir = options.dataDir ?? tauBenchDataDir();
  const faults: FaultConfig = { ...DEFAULT_FAULTS, ...options.faults };
  const services: Partial<Record<AgentName, TauService>> = {};
  const serviceUrls = {} as Record<AgentName, string>;
  let executor: RunningService | undefined;
  let cleanup = async () => {};
  const close = async () => {
    await executor?.close();
    await Promise.all(Object.values(services).map((s) => s.close()));
    await cleanup();
  };
  try {
    const firstPort = options.servicePort ?? 0;
    for (const [i, agent] of (["tristate", "retry_any", "never_retry"] as const).entries()) {
      const service = createTauService({ dataDir, faults, maxInstances: options.maxInstances });
      services[agent] = service;
      serviceUrls[agent] = await service.listen(firstPort === 0 ? 0 : firstPort + i);
    }
    const realism = (services.tristate as TauService).realism;
    const db = await chooseDatabase(options.database ?? "auto", options.embeddedDataDir);
    cleanup = db.cleanup;
    const env = readEnv({
      PORT: String(options.port ?? 0),
      LOG_LEVEL: options.logLevel ?? "warn",
      ...db.env,
    });
    const catalog = tauBenchTools({
      baseUrl: serviceUrls.tristate,
      realism,
      timing: options.unboundedLag ? "unbounded" : { faults },
    });
    const settleMs: Record<string, number> = {};
    for (const tool of catalog) if (tool.settleMs !== undefined) settleMs[tool.name] = tool.settleMs;
    executor = await startService(env, { tools: [...catalog, ...(options.extraTools ?? [])] });
    const agentKey = (await executor.services.keys.create({ name: "tau-bench replay agent", role: "agent" })).secret;
    const adminKey =
      executor.firstAdminKey ??
      (await executor.services.keys.create({ name: "tau-bench replay admin", role: "admin" })).secret;
    return {
      serviceUrls,
      realism,
      executor,
      executorUrl: executor.url,
      agentKey,
      adminKey,
      databaseLabel: db.label,
      faults,
      settleMs,
      close,
    };
  } catch (error) {
    await close().catch(() => {});
    throw error;
  }
}
