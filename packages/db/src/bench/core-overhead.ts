/**
 * `pnpm bench:core` — what `executor.call` adds on top of the physical floor, in one run:
 *
 * 1. the floor on the real PostgreSQL (a fresh database, dropped at the end): a raw `pg` single-row
 *    INSERT commit, sequential (p50/p99) and from 32 connections (rows/s);
 * 2. the bare tool call: a loopback HTTP tool (node:http in a worker thread, 201 JSON at once) through
 *    `callHttp`, sequential (p50/p99) and 32 concurrent (calls/s);
 * 3. `executor.call` with that tool (`idempotent_by_key` with a probe) through `PrismaIntentStore`:
 *    added latency per percentile and calls/s at 32 concurrent, outcome writes async and durable;
 * 4. the same on the embedded default (PGlite, one session).
 *
 * Prints a table and the ratios against the goals, and writes the figures as JSON to
 * `bench-results/core-overhead.json` at the repository root. Environment knobs (for quick runs):
 * `BENCH_SEQ` (sequential iterations, default 2000), `BENCH_SECONDS` (each concurrent phase, default 3).
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type AnyTool, createExecutor, Deadline } from "@tristate/core";
import pg from "pg";
import { parseIntoClientConfig } from "pg-connection-string";
import { openDatabase } from "../open-database.ts";
import { REPO_ROOT } from "../paths.ts";
import { PrismaIntentStore } from "../prisma-intent-store.ts";
import { createTestDatabase } from "../test-database.ts";
import { vacuumDeadRows } from "../vacuum.ts";
import { type ExecutorFigures, report } from "./core-report.ts";
import {
  bareCall,
  chargeTool,
  concurrent,
  type LatencyFigures,
  latency,
  loadAverage,
  sequential,
  startRemote,
} from "./harness.ts";
import { measureSweeper, type SweeperFigures } from "./sweeper-drain.ts";

const SEQ = Number(process.env.BENCH_SEQ ?? 2000);
const WARMUP = Math.max(100, Math.floor(SEQ / 10));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONCURRENCY = 32;
/** Stale records the sweeper drains (the defaults' pass drains a quarter of them). */
const DRAIN_RECORDS = Number(process.env.BENCH_DRAIN ?? 20_000);
/** The PostgreSQL variants, in the table's order. */
const PG_MODES = ["async", "background", "durable", "async, no group commit"] as const;
/** The embedded database is one session; fewer sequential iterations keep the run short. */
const EMBEDDED_SEQ = Math.min(SEQ, 1000);

let runCounter = 0;

/** How one executor variant under test is built from a store. */
type Mode = "async" | "durable" | "background" | "async, no group commit";

/**
 * `executor.call` variants, outcome writes async (the default), durable, in the background
 * (`backgroundOutcomes`), and async on a store without group commit. The sequential samples of the
 * variants are taken in alternating blocks (after a shared warm-up) so drift — JIT warm-up, a growing
 * table, other load on the machine — falls on all alike; then each variant's concurrent phase.
 */
async function measureExecutors<M extends Mode>(
  stores: Partial<Record<M, PrismaIntentStore>>,
  tool: AnyTool,
  bare: LatencyFigures,
  options: { seq: number; workers: number; modes: readonly M[]; vacuum: () => Promise<unknown> },
): Promise<Record<M, ExecutorFigures>> {
  const { modes } = options;
  const executors = Object.fromEntries(
    modes.map((mode) => [
      mode,
      createExecutor({
        store: stores[mode]!,
        tools: [tool],
        durableOutcomes: mode === "durable",
        backgroundOutcomes: mode === "background",
      }),
    ]),
  ) as Record<M, ReturnType<typeof createExecutor>>;
  const runId = `bench-${process.pid}-${++runCounter}`;
  const deadline = () => Deadline.after(60_000);
  let step = 0;
  const one = async (mode: M, run: string = runId) => {
    const i = step++;
    const envelope = await executors[mode].call({
      runId: run,
      stepId: `s-${i}`,
      tool: tool.name,
      args: { order_id: `a-${i}`, amount: 10 },
      deadline: deadline(),
    });
    if (envelope.status !== "SUCCEEDED" || envelope.replayed)
      throw new Error(`bench: unexpected envelope ${JSON.stringify(envelope)}`);
  };
  const warmup = Math.max(200, Math.floor(options.seq / 4));
  for (const mode of modes) await sequential(0, warmup, () => one(mode));
  await options.vacuum();
  const block = 100;
  const samples = Object.fromEntries(modes.map((m) => [m, [] as number[]])) as Record<M, number[]>;
  for (let done = 0; done < options.seq; done += block) {
    for (const mode of modes) {
      for (let i = 0; i < Math.min(block, options.seq - done); i++) {
        const t = performance.now();
        await one(mode);
        samples[mode].push(performance.now() - t);
      }
    }
    await options.vacuum(); // between blocks, untimed
  }
  const out = {} as Record<M, ExecutorFigures>;
  for (const mode of modes) {
    const seq = latency(samples[mode]);
    await options.vacuum();
    const conc = await concurrent(options.workers, SECONDS, (w) => one(mode, `${runId}-w${w}`));
    out[mode] = { sequential: seq, added: { p50: seq.p50 - bare.p50, p99: seq.p99 - bare.p99 }, concurrent: conc };
  }
  return out;
}

const FLOOR_TABLE = `CREATE TABLE bench_floor (id bigserial PRIMARY KEY, k text NOT NULL, v jsonb NOT NULL, at timestamptz NOT NULL)`;
const FLOOR_INSERT = "INSERT INTO bench_floor (k, v, at) VALUES ($1, $2::jsonb, $3)";

async function floorSequential(query: (text: string, values: unknown[]) => Promise<unknown>, n: number) {
  return sequential(n, Math.max(100, Math.floor(n / 10)), (i) =>
    query(FLOOR_INSERT, [`k-${i}`, '{"order_id":"A-1","amount":"10.00"}', new Date()]),
  );
}

async function main(): Promise<void> {
  const started = performance.now();
  const loadAtStart = loadAverage();
  const remote = await startRemote();
  const tool = chargeTool(remote.url);
  const db = await createTestDatabase();
  const pgInfo: Record<string, string> = {};
  try {
    // --- 1. floor ---
    const admin = new pg.Client(parseIntoClientConfig(db.url));
    await admin.connect();
    const { rows } = await admin.query<{ name: string; setting: string }>(
      "SELECT name, setting FROM pg_settings WHERE name IN ('server_version', 'fsync', 'synchronous_commit', 'wal_sync_method')",
    );
    for (const row of rows) pgInfo[row.name] = row.setting;
    await admin.query(FLOOR_TABLE);
    const floorSeq = await floorSequential((text, values) => admin.query(text, values), SEQ);
    await admin.end();
    const pool = new pg.Pool({ ...parseIntoClientConfig(db.url), max: CONCURRENCY });
    const floorConc = await concurrent(CONCURRENCY, SECONDS, (w, i) =>
      pool.query(FLOOR_INSERT, [`c-${w}-${i}`, '{"order_id":"A-1","amount":"10.00"}', new Date()]),
    );
    await pool.end();
    console.log(`floor done (${((performance.now() - started) / 1000).toFixed(1)} s)`);

    // --- 2. bare call ---
    const deadline = Deadline.after(10 * 60_000);
    const bareSeq = await sequential(SEQ, WARMUP, (i) => bareCall(tool, i, deadline));
    const bareConc = await concurrent(CONCURRENCY, SECONDS, (w, i) => bareCall(tool, w * 1_000_000 + i, deadline));
    console.log(`bare call done (${((performance.now() - started) / 1000).toFixed(1)} s)`);

    // --- 3. executor on PostgreSQL ---
    const store = new PrismaIntentStore({ databaseUrl: db.url, poolSize: CONCURRENCY });
    const ungrouped = new PrismaIntentStore({
      databaseUrl: db.url,
      poolSize: CONCURRENCY,
      groupCommit: false,
      groupUpdates: false,
    });
    let postgres: Record<(typeof PG_MODES)[number], ExecutorFigures>;
    try {
      postgres = await measureExecutors(
        { async: store, durable: store, background: store, "async, no group commit": ungrouped },
        tool,
        bareSeq,
        {
          seq: SEQ,
          workers: CONCURRENCY,
          modes: PG_MODES,
          vacuum: () => vacuumDeadRows((text) => store.pool.query(text)),
        },
      );
    } finally {
      await ungrouped.close();
    }
    const batches = store.claimBatchStats;
    console.log(`executor on PostgreSQL done (${((performance.now() - started) / 1000).toFixed(1)} s)`);

    // --- 3b. sweeper drain, and the hot path while the service's loop drains ---
    let sweeper: SweeperFigures;
    try {
      sweeper = await measureSweeper(store, db.url, tool, DRAIN_RECORDS);
    } finally {
      await store.close();
    }
    console.log(`sweeper done (${((performance.now() - started) / 1000).toFixed(1)} s)`);

    // --- 4. embedded (PGlite) ---
    const dataDir = await mkdtemp(join(tmpdir(), "tristate-bench-pglite-"));
    const embeddedFigures: {
      floor: LatencyFigures;
      async: ExecutorFigures;
      background: ExecutorFigures;
      durable: ExecutorFigures;
    } = {} as never;
    try {
      const embedded = await openDatabase({ embedded: true, dataDir });
      try {
        await embedded.store.pool.query(FLOOR_TABLE);
        embeddedFigures.floor = await floorSequential(
          (text, values) => embedded.store.pool.query({ text, values }),
          EMBEDDED_SEQ,
        );
        Object.assign(
          embeddedFigures,
          await measureExecutors(
            { async: embedded.store, background: embedded.store, durable: embedded.store },
            tool,
            bareSeq,
            {
              seq: EMBEDDED_SEQ,
              workers: CONCURRENCY,
              modes: ["async", "background", "durable"] as const,
              vacuum: () => vacuumDeadRows((text) => embedded.store.pool.query(text)),
            },
          ),
        );
      } finally {
        await embedded.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
    console.log(`embedded done (${((performance.now() - started) / 1000).toFixed(1)} s)\n`);

    // --- report ---
    const body = report(
      {
        floorSeq,
        floorConc,
        bareSeq,
        bareConc,
        postgres,
        embedded: embeddedFigures,
        sweeper,
        claimBatches: batches,
        load: { start: loadAtStart, end: loadAverage() },
      },
      CONCURRENCY,
    );
    const out = join(REPO_ROOT, "bench-results", "core-overhead.json");
    await mkdir(join(REPO_ROOT, "bench-results"), { recursive: true });
    await writeFile(
      out,
      `${JSON.stringify(
        {
          at: new Date().toISOString(),
          settings: {
            sequentialIterations: SEQ,
            embeddedSequentialIterations: EMBEDDED_SEQ,
            concurrency: CONCURRENCY,
            seconds: SECONDS,
          },
          postgres: pgInfo,
          node: process.version,
          ...body,
          totalSeconds: (performance.now() - started) / 1000,
        },
        null,
        2,
      )}\n`,
    );
    console.log(`\nwrote ${out} (${((performance.now() - started) / 1000).toFixed(1)} s in all)`);
  } finally {
    await db.drop();
    await remote.stop();
  }
}

await main();
