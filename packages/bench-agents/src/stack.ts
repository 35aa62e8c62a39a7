/**
 * What `pnpm bench:agents` runs against: the service in its own Node process (`apps/executor/src/main.ts`,
 * the real settings, the example catalog `tristate.config.ts`) on a fresh PostgreSQL database, its
 * `issue_refund` tool calling a loopback fake payment remote that answers after a uniform random
 * latency, an agent API key, and HTTP dispatchers that spread the agents over several loopback
 * source addresses.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { createTestDatabase, openDatabase, REPO_ROOT, type TestDatabase } from "@tristate/db";
import { type FakeRemote, startFakeRemote } from "@tristate/executor/demo-remotes";
import { Agent, fetch as undiciFetch } from "undici";

/** The remote's latency: uniform between these bounds, ms. */
export interface LatencyRange {
  minMs: number;
  maxMs: number;
}

/** The payment remote with a latency on every POST, and a stop for the latency feed. */
export interface SlowRemote {
  remote: FakeRemote;
  /** Base URL, e.g. `http://127.0.0.1:40123` (POST `/effects`). */
  url: string;
  close(): Promise<void>;
}

/** Mulberry32: a small seeded PRNG, uniform in [0, 1), so a run's latencies can be repeated. */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Starts the fake payment remote (`startFakeRemote`: honours `Idempotency-Key`, answers the catalog's
 * key and identity probes) and keeps its fault queue topped up with one `respondDelayMs` per POST,
 * drawn uniformly from `latency` (the effect commits on arrival, the answer leaves after the delay).
 */
export async function startSlowRemote(latency: LatencyRange, seed = 21): Promise<SlowRemote> {
  const remote = await startFakeRemote({ honorsKey: true });
  const random = seededRandom(seed);
  let queued = 0;
  const topUp = () => {
    // Each POST that passes the key check takes one fault; keep well ahead of them.
    while (queued - remote.posts < 5_000) {
      remote.fault({ respondDelayMs: latency.minMs + random() * (latency.maxMs - latency.minMs) });
      queued++;
    }
  };
  topUp();
  const timer = setInterval(topUp, 50);
  return {
    remote,
    url: remote.url,
    async close() {
      clearInterval(timer);
      await remote.close();
    },
  };
}

/** The service in its own process. */
export interface ServiceChild {
  /** Base URL, e.g. `http://127.0.0.1:40123`. */
  url: string;
  child: ChildProcess;
  /** Everything it printed (stdout and stderr). */
  output(): string;
  /** SIGTERM (the graceful stop), then SIGKILL after `graceMs`; resolves on exit. */
  stop(graceMs?: number): Promise<void>;
}

const EXECUTOR_DIR = join(REPO_ROOT, "apps", "executor");

/**
 * Starts `apps/executor/src/main.ts` (the service alone) with `env` over the inherited environment;
 * resolves once it prints its URL.
 * @throws Error when it exits first or does not start within 60 s.
 */
export async function startServiceChild(env: Record<string, string>): Promise<ServiceChild> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: EXECUTOR_DIR,
    env: { ...process.env, NODE_OPTIONS: "", PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on("data", (c: Buffer) => {
    out += c.toString();
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the service did not start in 60 s:\n${out}`)), 60_000);
    child.stdout?.on("data", () => {
      const m = /Tristate executor at (http:\/\/\S+)/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once("exit", () => {
      clearTimeout(timer);
      reject(new Error(`the service exited before starting:\n${out}`));
    });
  });
  return {
    url,
    child,
    output: () => out,
    async stop(graceMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A fresh database and an agent key in it. */
export async function freshDatabaseWithAgentKey(): Promise<{ db: TestDatabase; agentKey: string }> {
  const db = await createTestDatabase();
  const opened = await openDatabase({ databaseUrl: db.url, poolSize: 2 });
  try {
    const { secret } = await opened.keys.create({ name: "bench agents", role: "agent" });
    return { db, agentKey: secret };
  } finally {
    await opened.close();
  }
}

/**
 * One `fetch` per loopback source address (127.0.0.2, 127.0.0.3, …), each with its own keep-alive
 * connection pool: the agents are spread over them so that no address holds more than
 * `TRISTATE_MAX_CONNECTIONS_PER_ADDRESS` (default 100) connections, as agents on several hosts would.
 */
export function loopbackFetches(addresses: number): {
  fetches: (typeof globalThis.fetch)[];
  close(): Promise<void>;
} {
  const agents = Array.from(
    { length: addresses },
    (_, i) => new Agent({ localAddress: `127.0.0.${i + 2}`, keepAliveTimeout: 4_000 }),
  );
  const fetches = agents.map(
    (dispatcher) =>
      ((input: string | URL, init?: RequestInit) =>
        undiciFetch(input, {
          ...(init as Parameters<typeof undiciFetch>[1]),
          dispatcher,
        })) as unknown as typeof globalThis.fetch,
  );
  return {
    fetches,
    async close() {
      await Promise.all(agents.map((a) => a.close()));
    },
  };
}
