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
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { type AnyTool, callHttp, canon, createExecutor, Deadline, defineTool } from "@tristate/core";
import pg from "pg";
import { parseIntoClientConfig } from "pg-connection-string";
import { z } from "zod";
import { openDatabase } from "../open-database.ts";
import { REPO_ROOT } from "../paths.ts";
import { PrismaIntentStore } from "../prisma-intent-store.ts";
import { createTestDatabase } from "../test-database.ts";

const SEQ = Number(process.env.BENCH_SEQ ?? 2000);
const WARMUP = Math.max(100, Math.floor(SEQ / 10));
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONCURRENCY = 32;
/** The embedded database is one session; fewer sequential iterations keep the run short. */
const EMBEDDED_SEQ = Math.min(SEQ, 1000);

/** Latency summary of one sequential phase, ms. */
export interface LatencyFigures {
  n: number;
  p50: number;
  p99: number;
  mean: number;
}

/** Throughput of one concurrent phase. */
export interface ThroughputFigures {
  concurrency: number;
  seconds: number;
  operations: number;
  perSecond: number;
  /** CPU of the whole machine per operation, ms (from /proc/stat; includes PostgreSQL and anything else running). */
  machineCpuMsPerOp: number | null;
  /** CPU of this process (client, remote's worker thread, PGlite when embedded) per operation, ms. */
  processCpuMsPerOp: number;
}

/** Busy CPU time of the whole machine so far, ms (null where /proc/stat is missing). */
function machineBusyMs(): number | null {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0]!;
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    return ((user! + nice! + system! + irq! + softirq! + steal!) * 1000) / 100; // USER_HZ = 100
  } catch {
    return null;
  }
}

function latency(samples: number[]): LatencyFigures {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return {
    n: samples.length,
    p50: at(0.5),
    p99: at(0.99),
    mean: samples.reduce((a, b) => a + b, 0) / samples.length,
  };
}

/** Runs `op(i)` `warmup + n` times one after another; the last `n` durations, ms. */
async function sequential(n: number, warmup: number, op: (i: number) => Promise<unknown>): Promise<LatencyFigures> {
  const samples: number[] = [];
  for (let i = 0; i < warmup + n; i++) {
    const t = performance.now();
    await op(i);
    const dt = performance.now() - t;
    if (i >= warmup) samples.push(dt);
  }
  return latency(samples);
}

/** `workers` loops each running `op(worker, i)` back to back for `seconds` (after a 0.5 s warm-up). */
async function concurrent(
  workers: number,
  seconds: number,
  op: (worker: number, i: number) => Promise<unknown>,
): Promise<ThroughputFigures> {
  let counting = false;
  let stop = false;
  let done = 0;
  const loops = Array.from({ length: workers }, async (_, w) => {
    for (let i = 0; !stop; i++) {
      await op(w, i);
      if (counting) done++;
    }
  });
  await sleep(500);
  counting = true;
  const t = performance.now();
  const machine0 = machineBusyMs();
  const cpu0 = process.cpuUsage();
  await sleep(seconds * 1000);
  const elapsed = (performance.now() - t) / 1000;
  counting = false;
  const operations = done;
  const cpu = process.cpuUsage(cpu0);
  const machine1 = machineBusyMs();
  stop = true;
  await Promise.all(loops);
  return {
    concurrency: workers,
    seconds: elapsed,
    operations,
    perSecond: operations / elapsed,
    machineCpuMsPerOp: machine0 === null || machine1 === null ? null : (machine1 - machine0) / operations,
    processCpuMsPerOp: (cpu.user + cpu.system) / 1000 / operations,
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The loopback remote: node:http in a worker thread (its own event loop), 201 JSON at once. */
async function startRemote(): Promise<{ url: string; stop(): Promise<void> }> {
  const worker = new Worker(
    `const http = require("node:http");
     const { parentPort } = require("node:worker_threads");
     let n = 0;
     const server = http.createServer((req, res) => {
       req.resume();
       req.on("end", () => {
         const body = JSON.stringify({ id: "ch_" + (++n), status: "succeeded" });
         res.writeHead(201, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
         res.end(body);
       });
     });
     server.keepAliveTimeout = 60000;
     server.listen(0, "127.0.0.1", () => parentPort.postMessage(server.address().port));`,
    { eval: true },
  );
  const port = await new Promise<number>((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
  return {
    url: `http://127.0.0.1:${port}/charges`,
    async stop() {
      await worker.terminate();
    },
  };
}

/** The benchmarked tool: a charge on the loopback remote, keyed, with a (never used) key probe. */
function chargeTool(url: string): AnyTool {
  return defineTool({
    name: "create_charge",
    kind: "idempotent_by_key",
    args: z.object({ order_id: z.string(), amount: z.number() }),
    identity: { order_id: canon.upper, amount: canon.decimal(2) },
    timeoutMs: 5_000,
    async invoke(args, ctx) {
      const response = await callHttp(ctx, { method: "POST", url, body: args });
      return response.body;
    },
    async probe() {
      return null;
    },
  });
}

/** The bare call: the tool's `invoke` with the context the executor would build, no intent log. */
function bareCall(tool: AnyTool, i: number, deadline: Deadline): Promise<unknown> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), tool.timeoutMs);
  return tool
    .invoke(
      { order_id: `a-${i}`, amount: 10 },
      { idempotencyKey: `bare-${i}`, signal: controller.signal, timeoutMs: tool.timeoutMs, deadline, attempt: 1 },
    )
    .finally(() => clearTimeout(timer));
}

/** Figures of `executor.call` on one store and outcome mode. */
export interface ExecutorFigures {
  sequential: LatencyFigures;
  /** executor.call latency minus the bare call's, per percentile, ms. */
  added: { p50: number; p99: number };
  concurrent: ThroughputFigures;
}

let runCounter = 0;

type Mode = "async" | "durable";

/**
 * `executor.call` on one store, outcome writes async and durable. The sequential samples of the two
 * modes are taken in alternating blocks (after a shared warm-up) so drift — JIT warm-up, a growing
 * table, other load on the machine — falls on both alike; then each mode's concurrent phase.
 */
async function measureExecutors(
  store: PrismaIntentStore,
  tool: AnyTool,
  bare: LatencyFigures,
  options: { seq: number; workers: number },
): Promise<Record<Mode, ExecutorFigures>> {
  const modes = ["async", "durable"] as const;
  const executors = {
    async: createExecutor({ store, tools: [tool] }),
    durable: createExecutor({ store, tools: [tool], durableOutcomes: true }),
  };
  const runId = `bench-${process.pid}-${++runCounter}`;
  const deadline = () => Deadline.after(60_000);
  let step = 0;
  const one = async (mode: Mode, run: string = runId) => {
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
  const block = 100;
  const samples: Record<Mode, number[]> = { async: [], durable: [] };
  for (let done = 0; done < options.seq; done += block) {
    for (const mode of modes) {
      for (let i = 0; i < Math.min(block, options.seq - done); i++) {
        const t = performance.now();
        await one(mode);
        samples[mode].push(performance.now() - t);
      }
    }
  }
  const out = {} as Record<Mode, ExecutorFigures>;
  for (const mode of modes) {
    const seq = latency(samples[mode]);
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

const f = (ms: number) => ms.toFixed(3);
const r = (x: number) => Math.round(x).toLocaleString("en-US");
const conc = (t: ThroughputFigures) => [
  r(t.perSecond),
  t.machineCpuMsPerOp === null ? "n/a" : f(t.machineCpuMsPerOp),
  f(t.processCpuMsPerOp),
];

async function main(): Promise<void> {
  const started = performance.now();
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
    let postgres: Record<Mode, ExecutorFigures>;
    try {
      postgres = await measureExecutors(store, tool, bareSeq, { seq: SEQ, workers: CONCURRENCY });
    } finally {
      await store.close();
    }
    console.log(`executor on PostgreSQL done (${((performance.now() - started) / 1000).toFixed(1)} s)`);

    // --- 4. embedded (PGlite) ---
    const dataDir = await mkdtemp(join(tmpdir(), "tristate-bench-pglite-"));
    const embeddedFigures: {
      floor: LatencyFigures;
      async: ExecutorFigures;
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
          await measureExecutors(embedded.store, tool, bareSeq, { seq: EMBEDDED_SEQ, workers: CONCURRENCY }),
        );
      } finally {
        await embedded.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
    console.log(`embedded done (${((performance.now() - started) / 1000).toFixed(1)} s)\n`);

    // --- report ---
    const goals = {
      p50: { limit: 1.2 * floorSeq.p50, ratio: postgres.async.added.p50 / floorSeq.p50, goal: "≤ 1.2×" },
      p99: { limit: 3 * floorSeq.p50, ratio: postgres.async.added.p99 / floorSeq.p50, goal: "≤ 3×" },
      throughput: {
        limit: 0.8 * floorConc.perSecond,
        ratio: postgres.async.concurrent.perSecond / floorConc.perSecond,
        goal: "≥ 0.8×",
      },
    };
    const durableRatios = {
      p50: postgres.durable.added.p50 / floorSeq.p50,
      p99: postgres.durable.added.p99 / floorSeq.p50,
      throughput: postgres.durable.concurrent.perSecond / floorConc.perSecond,
    };

    const table: string[][] = [
      ["measure", "p50 ms", "p99 ms", "added p50", "added p99", `${CONCURRENCY}-conc /s`, "CPU ms/op", "node ms/op"],
      ["PostgreSQL: raw INSERT commit", f(floorSeq.p50), f(floorSeq.p99), "", "", ...conc(floorConc)],
      ["bare HTTP tool call (callHttp)", f(bareSeq.p50), f(bareSeq.p99), "", "", ...conc(bareConc)],
      ...(["async", "durable"] as const).map((mode) => [
        `executor.call, PostgreSQL, ${mode} outcome`,
        f(postgres[mode].sequential.p50),
        f(postgres[mode].sequential.p99),
        f(postgres[mode].added.p50),
        f(postgres[mode].added.p99),
        ...conc(postgres[mode].concurrent),
      ]),
      [
        "PGlite: raw INSERT (one session)",
        f(embeddedFigures.floor.p50),
        f(embeddedFigures.floor.p99),
        "",
        "",
        "",
        "",
        "",
      ],
      ...(["async", "durable"] as const).map((mode) => [
        `executor.call, PGlite, ${mode} outcome`,
        f(embeddedFigures[mode].sequential.p50),
        f(embeddedFigures[mode].sequential.p99),
        f(embeddedFigures[mode].added.p50),
        f(embeddedFigures[mode].added.p99),
        ...conc(embeddedFigures[mode].concurrent),
      ]),
    ];
    const widths = table[0]!.map((_, c) => Math.max(...table.map((row) => row[c]!.length)));
    for (const [i, row] of table.entries()) {
      console.log(row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join("  "));
      if (i === 0) console.log(widths.map((w) => "-".repeat(w)).join("  "));
    }
    const verdict = (ok: boolean) => (ok ? "met" : "NOT met");
    console.log(
      `\nCPU ms/op: busy CPU of the whole machine (${cpus().length} cores, /proc/stat) per operation in the concurrent phase; node ms/op: this process's share.`,
    );
    console.log(
      `Goals (PostgreSQL, async outcomes; durable outcomes in brackets). "p99 ≤ 3×" is read as: p99 added latency ≤ 3 × the raw INSERT commit p50.`,
    );
    console.log(
      `  sequential p50 added ${f(postgres.async.added.p50)} ms = ${goals.p50.ratio.toFixed(2)}× INSERT p50 (goal ${goals.p50.goal}): ${verdict(goals.p50.ratio <= 1.2)}  [durable ${durableRatios.p50.toFixed(2)}×]`,
    );
    console.log(
      `  sequential p99 added ${f(postgres.async.added.p99)} ms = ${goals.p99.ratio.toFixed(2)}× INSERT p50 (goal ${goals.p99.goal}): ${verdict(goals.p99.ratio <= 3)}  [durable ${durableRatios.p99.toFixed(2)}×]`,
    );
    console.log(
      `  ${CONCURRENCY}-concurrent ${r(postgres.async.concurrent.perSecond)} calls/s = ${goals.throughput.ratio.toFixed(2)}× raw INSERT rows/s (goal ${goals.throughput.goal}): ${verdict(goals.throughput.ratio >= 0.8)}  [durable ${durableRatios.throughput.toFixed(2)}×]`,
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
          floor: { sequential: floorSeq, concurrent: floorConc },
          bareCall: { sequential: bareSeq, concurrent: bareConc },
          executor: { postgres, embedded: embeddedFigures },
          goals: {
            interpretation: "p99 goal: p99 added latency ≤ 3 × raw INSERT commit p50",
            async: {
              p50Ratio: goals.p50.ratio,
              p50Met: goals.p50.ratio <= 1.2,
              p99Ratio: goals.p99.ratio,
              p99Met: goals.p99.ratio <= 3,
              throughputRatio: goals.throughput.ratio,
              throughputMet: goals.throughput.ratio >= 0.8,
            },
            durable: durableRatios,
          },
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
