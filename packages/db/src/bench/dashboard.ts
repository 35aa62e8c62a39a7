/**
 * `pnpm bench:dashboard [--records N] [--json FILE] [--keep] [--iterations K] [--no-markdown] [--existing]` — the
 * dashboard's reads at scale (issue 14), with the executor's hot path measured beside them:
 *
 * 1. a database of its own on the server of `DATABASE_URL` (default: the local test server), filled
 *    by SQL to N records (default 1,000,000: 30 tools, 30 days, the mix; ~3 events each) and
 *    20,000 audit entries; the rollups caught up by the same refresh the executor runs;
 * 2. `executor.call` (a loopback HTTP tool through `PrismaIntentStore`, one call after another) for
 *    a few seconds alone: the hot path at that table size;
 * 3. every dashboard read K times (default 30) in rounds, while the same `executor.call` loop and the
 *    executor's background refresh (every 5 s) run against the same database: p50/p95 per read and
 *    the hot path's latency during the reads.
 *
 * Prints a table, writes `--json FILE` as `{"records", "reads": [{"name", "p50Ms", "p95Ms"}],
 * "hotPath": {…}}` and the section between the `bench:dashboard` markers of BENCHMARKS.md (unless
 * `--no-markdown`). The database is dropped at the end unless `--keep`. With `--existing`, `DATABASE_URL`
 * names a database an earlier `--keep` run filled (`--records` must say how many): no fill, no drop.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { createExecutor, Deadline } from "@tristate/core";
import pg from "pg";
import { PrismaIntentStore } from "../prisma-intent-store.ts";
import { startReadModelLoop } from "../rollups/read-model-loop.ts";
import { refreshIntentRollups } from "../rollups/refresh-rollups.ts";
import { createTestDatabase } from "../test-database.ts";
import { fillIntentLog } from "./dashboard-fill.ts";
import { dashboardReads, fillAudit } from "./dashboard-reads.ts";
import { type DashboardFigures, type HotPathFigures, percentiles, writeMarkdown } from "./dashboard-report.ts";
import { chargeTool, loadAverage, startRemote } from "./harness.ts";

function parseArgs(argv: string[]) {
  const value = (name: string) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const records = Number((value("--records") ?? "1000000").replaceAll("_", ""));
  const iterations = Number(value("--iterations") ?? "30");
  if (!Number.isInteger(records) || records < 1000) throw new Error("--records must be an integer ≥ 1000");
  if (!Number.isInteger(iterations) || iterations < 1) throw new Error("--iterations must be a positive integer");
  if (argv.includes("--existing") && !process.env.DATABASE_URL) throw new Error("--existing needs DATABASE_URL");
  return {
    records,
    iterations,
    json: value("--json"),
    keep: argv.includes("--keep"),
    existing: argv.includes("--existing"),
    markdown: !argv.includes("--no-markdown"),
  };
}

const log = (message: string) => console.error(`[bench:dashboard] ${message}`);

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const started = performance.now();
  // `--existing`: DATABASE_URL is a database an earlier run filled (and kept): measure the reads again.
  const db = args.existing
    ? {
        url: process.env.DATABASE_URL!,
        name: new URL(process.env.DATABASE_URL!).pathname.slice(1),
        drop: async () => {},
      }
    : await createTestDatabase(process.env.DATABASE_URL ?? undefined);
  log(`database ${db.name}${args.keep || args.existing ? " (kept)" : ""}`);
  const remote = await startRemote();
  const store = new PrismaIntentStore({ databaseUrl: db.url, poolSize: 8 });
  try {
    let t = performance.now();
    if (!args.existing) {
      await fillIntentLog(db.url, {
        records: args.records,
        onProgress: (n) =>
          log(`filled ${n.toLocaleString("en")} records (${((performance.now() - t) / 1000).toFixed(0)} s)`),
      });
      await fillAudit(db.url, 20_000);
    }
    const fillSeconds = (performance.now() - t) / 1000;
    t = performance.now();
    for (let i = 0; ; i++) {
      const r = await refreshIntentRollups(store.prisma, { maxRangeMs: 86_400_000 });
      if (r.caughtUp) break;
      if (i % 5 === 4) log(`rollups: caught up to ${new Date(r.toEpochMs).toISOString()}`);
    }
    const rollupSeconds = (performance.now() - t) / 1000;
    // As autovacuum would (the test server runs without it): visibility map and statistics of the
    // rollups the catch-up wrote, so their reads can be index-only.
    await vacuumRollups(db.url);
    const sizes = await tableSizes(db.url);
    log(`filled in ${fillSeconds.toFixed(0)} s, rollups in ${rollupSeconds.toFixed(0)} s; ${sizes}`);

    const tool = chargeTool(remote.url);
    const executor = createExecutor({ store, tools: [tool] });
    let step = 0;
    const call = async () => {
      const i = step++;
      const envelope = await executor.call({
        runId: `bench-dashboard-${process.pid}`,
        stepId: `s-${i}`,
        tool: tool.name,
        args: { order_id: `d-${i}`, amount: 10 },
        deadline: Deadline.after(60_000),
      });
      if (envelope.status !== "SUCCEEDED") throw new Error(`bench: unexpected envelope ${JSON.stringify(envelope)}`);
    };
    for (let i = 0; i < 200; i++) await call();
    const alone = await callsFor(call, 5_000);
    log(`executor.call alone: p50 ${alone.p50Ms.toFixed(2)} ms, p95 ${alone.p95Ms.toFixed(2)} ms`);

    const reads = await dashboardReads(store.prisma, db.url);
    for (const read of reads) await read.run(); // warm-up: plans, caches
    const loop = startReadModelLoop(store.prisma, { intervalMs: 5_000 });
    let stop = false;
    const during: number[] = [];
    const calls = (async () => {
      while (!stop) {
        const s = performance.now();
        await call();
        during.push(performance.now() - s);
      }
    })();
    const samples = new Map<string, number[]>(reads.map((r) => [r.name, []]));
    for (let round = 0; round < args.iterations; round++) {
      for (const read of reads) {
        const s = performance.now();
        await read.run();
        samples.get(read.name)!.push(performance.now() - s);
      }
    }
    stop = true;
    await calls;
    await loop.stop();
    const hotPath: HotPathFigures = { alone, duringReads: percentiles(during) };
    const figures: DashboardFigures = {
      records: args.records,
      reads: reads.map((r) => {
        const p = percentiles(samples.get(r.name)!);
        return { name: r.name, p50Ms: round2(p.p50Ms), p95Ms: round2(p.p95Ms) };
      }),
      hotPath,
      machine: {
        cpus: (await import("node:os")).cpus().length,
        loadAverage: loadAverage(),
        fillSeconds,
        rollupSeconds,
        sizes,
      },
    };
    printTable(figures);
    if (args.json) {
      // Relative to where `pnpm bench:dashboard` was typed (pnpm runs the script in packages/db).
      const file = resolve(process.env.INIT_CWD ?? process.cwd(), args.json);
      await mkdir(dirname(file), { recursive: true });
      const { machine: _machine, ...json } = figures;
      await writeFile(file, `${JSON.stringify(json, null, 2)}\n`);
      log(`wrote ${file}`);
    }
    if (args.markdown) log(`wrote ${await writeMarkdown(figures)}`);
    log(`done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  } finally {
    await store.close();
    await remote.stop();
    if (!args.keep) await db.drop();
  }
}

const round2 = (x: number) => Math.round(x * 100) / 100;

/** `call()` back to back for `ms`; its latency percentiles. */
async function callsFor(call: () => Promise<void>, ms: number) {
  const samples: number[] = [];
  const until = performance.now() + ms;
  while (performance.now() < until) {
    const s = performance.now();
    await call();
    samples.push(performance.now() - s);
  }
  return percentiles(samples);
}

async function vacuumRollups(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("VACUUM (ANALYZE) intent_rollups");
  } finally {
    await client.end();
  }
}

async function tableSizes(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ t: string; size: string }>(
      `SELECT t, pg_size_pretty(pg_total_relation_size(t)) AS size
       FROM unnest(ARRAY['intent_records', 'intent_events', 'intent_rollups']) AS t`,
    );
    return rows.map((r) => `${r.t} ${r.size}`).join(", ");
  } finally {
    await client.end();
  }
}

function printTable(f: DashboardFigures): void {
  const width = Math.max(...f.reads.map((r) => r.name.length));
  console.log(`\n${f.records.toLocaleString("en")} intent records\n`);
  console.log(`${"read".padEnd(width)}  p50 ms   p95 ms`);
  for (const r of f.reads) console.log(`${r.name.padEnd(width)}  ${fmt(r.p50Ms)}  ${fmt(r.p95Ms)}`);
  const h = f.hotPath;
  console.log(
    `\nexecutor.call alone:         p50 ${fmt(h.alone.p50Ms)}  p95 ${fmt(h.alone.p95Ms)}  (${h.alone.n} calls)`,
  );
  console.log(
    `executor.call during reads:  p50 ${fmt(h.duringReads.p50Ms)}  p95 ${fmt(h.duringReads.p95Ms)}  (${h.duringReads.n} calls)`,
  );
}

const fmt = (x: number) => x.toFixed(2).padStart(7);

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
