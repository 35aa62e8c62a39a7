/**
 * The shared body of the schema-cost benches (hot-path-indexes, identity-index-cost): `executor.call`
 * (loopback HTTP tool, `PrismaIntentStore`, async outcome) on two fresh databases — the current
 * migrations, and the same with `undoSql` applied — in alternating blocks of 100 calls so drift falls
 * on both alike, after 300 warm-up calls each. Reads `--calls N` (default 3000) and `--reverse` (the
 * other variant's block first). Prints p50/p95/p99 (ms) per variant; both databases are dropped.
 */
import { createExecutor, Deadline } from "@tristate/core";
import pg from "pg";
import { PrismaIntentStore } from "../prisma-intent-store.ts";
import { createTestDatabase } from "../test-database.ts";
import { percentiles } from "./dashboard-report.ts";
import { chargeTool, startRemote } from "./harness.ts";

/** The two variants of {@link compareSchemaVariants}. */
export interface SchemaVariants {
  /** Label of the current migrations. */
  withLabel: string;
  /** Label of the database with `undoSql` applied. */
  withoutLabel: string;
  /** SQL that takes the change under test out of a migrated database. */
  undoSql: string;
  /** Prefix of the calls' run ids. */
  runIdPrefix: string;
}

/** Runs the comparison. @throws when a call does not end SUCCEEDED or a database cannot be made. */
export async function compareSchemaVariants(options: SchemaVariants): Promise<void> {
  const { withLabel, withoutLabel } = options;
  const i = process.argv.indexOf("--calls");
  const calls = i >= 0 ? Number(process.argv[i + 1]) : 3000;
  const remote = await startRemote();
  const tool = chargeTool(remote.url);
  const dbs = { [withLabel]: await createTestDatabase(), [withoutLabel]: await createTestDatabase() };
  const admin = new pg.Client({ connectionString: dbs[withoutLabel]!.url });
  await admin.connect();
  await admin.query(options.undoSql);
  await admin.end();
  // `--reverse`: the other variant's block first (to see any order effect).
  const variants: string[] = Object.keys(dbs);
  if (process.argv.includes("--reverse")) variants.reverse();
  const stores = variants.map((v) => new PrismaIntentStore({ databaseUrl: dbs[v]!.url, poolSize: 4 }));
  try {
    const executors = stores.map((store) => createExecutor({ store, tools: [tool] }));
    let step = 0;
    const one = async (v: number) => {
      const n = step++;
      const envelope = await executors[v]!.call({
        runId: `${options.runIdPrefix}-${process.pid}`,
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
