/**
 * A local Tristate stack for the client's and adapters' tests and the agent examples: the executor
 * service (its real HTTP API) on a fresh database, a fake refund remote over a real loopback socket,
 * the `issue_refund` tool against it, and an agent key. Not for production use.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AnyTool } from "@tristate/core";
import { ApiKeyStore, createTestDatabase } from "@tristate/db";
import { type FakeRemote, refundTool, startFakeRemote } from "@tristate/executor/demo-remotes";
import { readEnv } from "@tristate/executor/env";
import { type RunningService, startService } from "@tristate/executor/service";

/** Where the stack keeps its intent log. */
export type LocalDatabase = "postgres" | "embedded";

/** Options of {@link startLocalStack}. */
export interface LocalStackOptions {
  /**
   * `postgres`: a fresh database on the server of `TRISTATE_TEST_DATABASE_URL` (default: the local
   * PostgreSQL at 127.0.0.1:5432), dropped on close. `embedded`: PGlite in a temporary directory,
   * removed on close (no server needed; slower to start). @default "postgres"
   */
  database?: LocalDatabase;
  /** Service settings over the stack's defaults (fast probes, no sweeper, silent log). */
  env?: Record<string, string>;
  /** The catalog (default: `issue_refund` against the remote, with a key probe and an identity probe). */
  tools?: (remote: FakeRemote) => AnyTool[];
}

/** A running stack. */
export interface LocalStack {
  /** The executor's base URL, e.g. `http://127.0.0.1:40123` (API under `/trpc/`). */
  url: string;
  /** An API key with the `agent` role. */
  agentKey: string;
  /** An API key with the `viewer` role (reads only; calling tools is a 403). */
  viewerKey: string;
  /** The refund remote: `effects` are the refunds it really made; `posts` the requests that reached it. */
  remote: FakeRemote;
  service: RunningService;
  /**
   * Loses the refund remote's next answer: it commits the refund, then resets the connection, and
   * its lookups fail until {@link LocalStack.recover}, so the executor can prove nothing either way —
   * the envelope is UNKNOWN with `retry_safe: false`.
   */
  loseNextAnswer(): void;
  /** The remote's lookups answer again: a repeat call reconciles (finds the refund; sends nothing). */
  recover(): void;
  /** Stops the service and the remote, and drops the database (or removes the embedded one). */
  close(): Promise<void>;
}

/** Fast, quiet defaults for a local stack: two probes 10 ms apart, no background sweeper. */
const STACK_ENV: Record<string, string> = {
  PORT: "0",
  HOST: "127.0.0.1",
  LOG_LEVEL: "silent",
  TRISTATE_SWEEP_INTERVAL_MS: "0",
  TRISTATE_PROBE_ATTEMPTS: "2",
  TRISTATE_PROBE_SPACING_MS: "10",
  TRISTATE_PROBE_TIMEOUT_MS: "500",
};

/**
 * Starts the executor on a fresh database with the refund remote and creates an agent and a viewer key.
 * @throws when PostgreSQL is unreachable (`postgres`) or the service fails to start.
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const database = options.database ?? "postgres";
  const remote = await startFakeRemote({ idFormat: (n) => `RF-${n}` });
  const cleanups: (() => Promise<void>)[] = [() => remote.close()];
  const cleanup = async () => {
    for (const step of cleanups.reverse()) await step().catch(() => undefined);
  };
  try {
    const dbEnv: Record<string, string> = {};
    if (database === "postgres") {
      const db = await createTestDatabase();
      cleanups.push(() => db.drop());
      dbEnv.DATABASE_URL = db.url;
    } else {
      const dir = await mkdtemp(join(tmpdir(), "tristate-local-"));
      cleanups.push(() => rm(dir, { recursive: true, force: true }));
      dbEnv.TRISTATE_DATA_DIR = dir;
    }
    const env = readEnv({ ...STACK_ENV, ...dbEnv, ...options.env });
    const tools = options.tools ? options.tools(remote) : [refundTool(remote, { description: "Refund an order" })];
    const service = await startService(env, { tools });
    cleanups.push(() => service.close());
    const keys = new ApiKeyStore(service.services.store.prisma);
    const agentKey = (await keys.create({ name: "local agent", role: "agent" })).secret;
    const viewerKey = (await keys.create({ name: "local viewer", role: "viewer" })).secret;
    return {
      url: service.url,
      agentKey,
      viewerKey,
      remote,
      service,
      loseNextAnswer() {
        remote.fault({ answer: "reset" });
        remote.probesFail = true;
      },
      recover() {
        remote.probesFail = false;
      },
      close: cleanup,
    };
  } catch (error) {
    await cleanup();
    throw error;
  }
}
