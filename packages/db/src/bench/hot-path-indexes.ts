/**
 * `tsx src/bench/hot-path-indexes.ts [--calls N] [--reverse]` — what issue 14's read-side schema costs the hot
 * path: `executor.call` (loopback HTTP tool, `PrismaIntentStore`, async outcome) on two fresh
 * databases, in alternating blocks of 100 calls so drift falls on both alike:
 *
 * - `issue 14`: the current migrations (created_at index, five partial live-set indexes instead of
 *   (tenant, status, deadline), the ever_unknown, rollup-dirty and compensation-dirty triggers);
 * - `before issue 14`: the same database with that schema change undone (the partial indexes, the
 *   created_at index and the ever_unknown, rollup-dirty and compensation-dirty triggers dropped,
 *   (tenant, status, deadline) back).
 *
 * Prints p50/p95/p99 per variant. Both databases are dropped at the end.
 */
import { createExecutor, Deadline } from "@tristate/core";
import pg from "pg";
import { PrismaIntentStore } from "../prisma-intent-store.ts";
import { createTestDatabase } from "../test-database.ts";
import { percentiles } from "./dashboard-report.ts";
import { chargeTool, startRemote } from "./harness.ts";

const UNDO_ISSUE_14 = `
  DROP TRIGGER intent_records_ever_unknown ON intent_records;
  DROP TRIGGER intent_records_rollup_dirty ON intent_records;
  DROP TRIGGER intent_records_compensation_dirty_insert ON intent_records;
  DROP TRIGGER intent_records_compensation_dirty_update ON intent_records;
  DROP INDEX intent_records_created_idx, intent_records_live_recheck_idx, intent_records_live_created_idx,
    intent_records_needs_human_idx, intent_records_resolved_idx;
  CREATE INDEX intent_records_status_deadline_idx ON intent_records (tenant, status, lease_until_at);`;

async function main(): Promise<void> {
  const i = process.argv.indexOf("--calls");
  const calls = i >= 0 ? Number(process.argv[i + 1]) : 3000;
  const remote = await startRemote();
  const tool = chargeTool(remote.url);
  const dbs = { "issue 14": await createTestDatabase(), "before issue 14": await createTestDatabase() };
  const admin = new pg.Client({ connectionString: dbs["before issue 14"].url });
  await admin.connect();
  await admin.query(UNDO_ISSUE_14);
  await admin.end();
  // `--reverse`: the other variant's block first (to see any order effect).
  const variants = Object.keys(dbs) as (keyof typeof dbs)[];
  if (process.argv.includes("--reverse")) variants.reverse();
  const stores = variants.map((v) => new PrismaIntentStore({ databaseUrl: dbs[v].url, poolSize: 4 }));
  try {
    const executors = stores.map((store) => createExecutor({ store, tools: [tool] }));
    let step = 0;
    const one = async (v: number) => {
      const n = step++;
      const envelope = await executors[v]!.call({
        runId: `hot-path-indexes-${process.pid}`,
        stepId: `s-${n}`,
        tool: tool.name,
        args: { order_id: `h-${n}`, amount: 10 },
        deadline: Deadline.after(60_000),
      });
      if (envelope.status !== "SUCCEEDED") throw new Error(`unexpected envelope ${JSON.stringify(envelope)}`);
    };
    for (let v = 0; v < variants.length; v++) for (let k = 0; k < 300; k++) await one(v);
    const samples: number[][] = variants.map(() => []);
    for (let done = 0; done < calls; done += 100) {
      for (let v = 0; v < variants.length; v++) {
        for (let k = 0; k < 100; k++) {
          const t = performance.now();
          await one(v);
          samples[v]!.push(performance.now() - t);
        }
      }
    }
    for (const [v, name] of variants.entries()) {
      const p = percentiles(samples[v]!);
      console.log(`${name.padEnd(16)} executor.call p50 ${p.p50Ms} ms, p95 ${p.p95Ms} ms, p99 ${p.p99Ms} ms (${p.n})`);
    }
  } finally {
    for (const store of stores) await store.close();
    await remote.stop();
    for (const db of Object.values(dbs)) await db.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
