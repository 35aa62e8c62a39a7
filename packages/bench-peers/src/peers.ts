/**
 * `pnpm bench:peers` — the floor, Tristate and DBOS Transact side by side, in one process and one run,
 * on one PostgreSQL server (each its own fresh database; `fsync` and `synchronous_commit` as the server
 * has them, reported):
 *
 * - floor: a raw `pg` single-row INSERT commit into a one-index table;
 * - Tristate: `executor.call` of an in-process `idempotent_by_key` tool with a probe (claim durable,
 *   outcome write not durable: the default), its outcome answered in the background
 *   (`backgroundOutcomes`), and a run of eleven calls;
 * - DBOS Transact (`@dbos-inc/dbos-sdk`, pinned): a registered workflow with one step and with eleven
 *   steps, each step doing the same trivial work as the tool.
 *
 * Sequential p50/p99 (samples taken in alternating blocks of 50 after a warm-up, so drift falls on all
 * alike) and 32-concurrent throughput. Writes `bench-results/peers.json` and the table between the
 * `peers` markers of BENCHMARKS.md. Knobs: `BENCH_SEQ` (default 2000), `BENCH_SECONDS` (default 3).
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { DBOS } from "@dbos-inc/dbos-sdk";
import { canon, createExecutor, Deadline, defineTool } from "@tristate/core";
import { createTestDatabase, PrismaIntentStore, REPO_ROOT, vacuumDeadRows } from "@tristate/db";
import { concurrent, latency, loadAverage, sequential } from "@tristate/db/bench";
import pg from "pg";
import { parseIntoClientConfig } from "pg-connection-string";
import { z } from "zod";
import { type PeerFigures, writeReport } from "./peers-report.ts";

const SEQ = Number(process.env.BENCH_SEQ ?? 2000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONCURRENCY = 32;
const BLOCK = 50;

/** The trivial work every step does (the same for every variant). */
async function work(order: string): Promise<{ id: string; status: string }> {
  return { id: `ch_${order}`, status: "succeeded" };
}

async function main(): Promise<void> {
  const started = performance.now();
  const load = { start: loadAverage(), end: null as number[] | null };
  const db = await createTestDatabase();
  const dbosDb = `dbos_peers_${process.pid}_${Date.now()}`;
  const admin = new pg.Client(parseIntoClientConfig(db.url));
  await admin.connect();
  const server: Record<string, string> = {};
  const { rows } = await admin.query<{ name: string; setting: string }>(
    "SELECT name, setting FROM pg_settings WHERE name IN ('server_version', 'fsync', 'synchronous_commit', 'wal_sync_method')",
  );
  for (const row of rows) server[row.name] = row.setting;
  await admin.query(`CREATE DATABASE "${dbosDb}"`);
  await admin.query(
    "CREATE TABLE bench_floor (id bigserial PRIMARY KEY, k text NOT NULL, v jsonb NOT NULL, at timestamptz NOT NULL)",
  );
  const floorPool = new pg.Pool({ ...parseIntoClientConfig(db.url), max: CONCURRENCY });
  const store = new PrismaIntentStore({ databaseUrl: db.url, poolSize: CONCURRENCY });
  try {
    // --- Tristate ---
    const tool = defineTool({
      name: "create_charge",
      kind: "idempotent_by_key",
      args: z.object({ order_id: z.string(), amount: z.number() }),
      identity: { order_id: canon.upper, amount: canon.decimal(2) },
      timeoutMs: 5_000,
      invoke: (args) => work(args.order_id),
      probe: async () => null,
    });
    const tristate = createExecutor({ store, tools: [tool] });
    const background = createExecutor({ store, tools: [tool], backgroundOutcomes: true });
    let n = 0;
    const call = async (executor: typeof tristate, run: string) => {
      const i = n++;
      const envelope = await executor.call({
        runId: run,
        stepId: `s-${i}`,
        tool: tool.name,
        args: { order_id: `a-${i}`, amount: 10 },
        deadline: Deadline.after(60_000),
      });
      if (envelope.status !== "SUCCEEDED") throw new Error(`bench: ${JSON.stringify(envelope)}`);
    };

    // --- DBOS Transact: its own database on the same server ---
    DBOS.setConfig({
      name: "tristate-peers",
      systemDatabaseUrl: inDatabase(db.url, dbosDb),
      systemDatabasePoolSize: CONCURRENCY,
      logLevel: "error",
    });
    const step = (order: string) => DBOS.runStep(() => work(order), { name: "charge" });
    const oneStep = DBOS.registerWorkflow(async (order: string) => step(order), { name: "oneStep" });
    const elevenSteps = DBOS.registerWorkflow(
      async (order: string) => {
        let last: Awaited<ReturnType<typeof work>> | undefined;
        for (let s = 0; s < 11; s++) last = await step(`${order}-${s}`);
        return last;
      },
      { name: "elevenSteps" },
    );
    await DBOS.launch();

    const variants: { name: string; steps: number; op: (w: number, i: number) => Promise<unknown> }[] = [
      {
        name: "raw INSERT commit (floor)",
        steps: 1,
        op: (w, i) =>
          floorPool.query({
            name: "floor",
            text: "INSERT INTO bench_floor (k, v, at) VALUES ($1, $2::jsonb, $3)",
            values: [`k-${w}-${i}-${n++}`, '{"order_id":"A-1","amount":"10.00"}', new Date()],
          }),
      },
      { name: "Tristate executor.call", steps: 1, op: (w) => call(tristate, `peers-${w}`) },
      { name: "Tristate, background outcome", steps: 1, op: (w) => call(background, `peers-bg-${w}`) },
      {
        name: "Tristate, 11 calls",
        steps: 11,
        op: async (w) => {
          const run = `peers-11-${w}-${n++}`;
          for (let s = 0; s < 11; s++) await call(tristate, run);
        },
      },
      { name: `DBOS ${DBOS_VERSION}, 1-step workflow`, steps: 1, op: () => oneStep(`o-${n++}`) },
      { name: `DBOS ${DBOS_VERSION}, 11-step workflow`, steps: 11, op: () => elevenSteps(`e-${n++}`) },
    ];

    // Autovacuum is off on the test server: between blocks (untimed) both databases get what it would
    // do, so neither side's update-heavy tables slow it down as their dead rows pile up.
    const dbosAdmin = new pg.Client(parseIntoClientConfig(inDatabase(db.url, dbosDb)));
    await dbosAdmin.connect();
    const vacuum = async () => {
      await vacuumDeadRows((text) => admin.query(text));
      await vacuumDeadRows((text) => dbosAdmin.query(text));
    };
    // Warm-up (JIT, prepared statements, pools), then sequential samples in alternating blocks.
    for (const v of variants) await sequential(0, Math.max(100, SEQ / 10), (i) => v.op(0, i));
    await vacuum();
    const samples = variants.map(() => [] as number[]);
    for (let done = 0; done < SEQ; done += BLOCK) {
      for (const [k, v] of variants.entries()) {
        for (let i = 0; i < Math.min(BLOCK, SEQ - done); i++) {
          const t = performance.now();
          await v.op(0, done + i);
          samples[k]!.push(performance.now() - t);
        }
      }
      await vacuum();
      if (done % 500 === 0)
        console.log(`sequential ${done}/${SEQ} (${((performance.now() - started) / 1000).toFixed(0)} s)`);
    }
    const figures: PeerFigures[] = [];
    for (const [k, v] of variants.entries()) {
      await vacuum();
      const c = await concurrent(CONCURRENCY, SECONDS, v.op);
      figures.push({ name: v.name, steps: v.steps, sequential: latency(samples[k]!), concurrent: c });
      console.log(`${v.name}: concurrent done`);
    }
    await dbosAdmin.end();
    load.end = loadAverage();
    await writeReport({
      figures,
      settings: { sequentialIterations: SEQ, concurrency: CONCURRENCY, seconds: SECONDS, block: BLOCK },
      server,
      node: process.version,
      dbos: DBOS_VERSION,
      load,
      totalSeconds: (performance.now() - started) / 1000,
    });
  } finally {
    await DBOS.shutdown().catch(() => {});
    await store.close();
    await floorPool.end();
    await admin.query(`DROP DATABASE IF EXISTS "${dbosDb}" WITH (FORCE)`).catch(() => {});
    await admin.end();
    await db.drop();
  }
}

const DBOS_VERSION: string = JSON.parse(
  await readFile(join(REPO_ROOT, "packages/bench-peers/node_modules/@dbos-inc/dbos-sdk/package.json"), "utf8"),
).version;

/** The same server URL with another database. */
function inDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

await main();
