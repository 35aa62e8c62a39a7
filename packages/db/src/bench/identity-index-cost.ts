/**
 * `tsx src/bench/identity-index-cost.ts [--calls N] [--reverse]` — what search by business identity
 * (issue 22 §4) costs the hot path: `executor.call` (loopback HTTP tool, `PrismaIntentStore`, async
 * outcome) on two fresh databases, in alternating blocks of 100 calls so drift falls on both alike —
 * the current migrations, and the same without the GIN index on `intent_records.identity` (every
 * claim enters it, and every outcome update too: updates are never HOT). Prints p50/p95/p99 per
 * variant. Both databases are dropped at the end.
 */
import { createExecutor, Deadline } from "@tristate/core";
import pg from "pg";
import { PrismaIntentStore } from "../prisma-intent-store.ts";
import { createTestDatabase } from "../test-database.ts";
import { percentiles } from "./dashboard-report.ts";
import { chargeTool, startRemote } from "./harness.ts";

const WITHOUT_IDENTITY_INDEX = "DROP INDEX intent_records_identity_idx";

async function main(): Promise<void> {
  const i = process.argv.indexOf("--calls");
  const calls = i >= 0 ? Number(process.argv[i + 1]) : 3000;
  const remote = await startRemote();
  const tool = chargeTool(remote.url);
  const dbs = { "identity index": await createTestDatabase(), "without it": await createTestDatabase() };
  const admin = new pg.Client({ connectionString: dbs["without it"].url });
  await admin.connect();
  await admin.query(WITHOUT_IDENTITY_INDEX);
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
        runId: `identity-index-cost-${process.pid}`,
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
