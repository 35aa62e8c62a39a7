/**
 * Group commit's design directions side by side (issue 13): 32 concurrent `executor.call`s per second
 * through stores without grouping, with grouping of claims and outcome writes at 2, 4 and 8 batch
 * statements in flight, and with claims grouped only; each with outcome writes awaited and in the
 * background; three interleaved rounds of 1.5 s phases beside the raw INSERT loop, medians printed.
 * Run: `npx tsx src/bench/group-commit-variants.ts` in packages/db (about 90 s).
 */
import { createExecutor, Deadline } from "@tristate/core";
import pg from "pg";
import { parseIntoClientConfig } from "pg-connection-string";
import { PrismaIntentStore } from "../prisma-intent-store.ts";
import { createTestDatabase } from "../test-database.ts";
import { chargeTool, concurrent, startRemote } from "./harness.ts";

const remote = await startRemote();
const tool = chargeTool(remote.url);
const db = await createTestDatabase();
const floorPool = new pg.Pool({ ...parseIntoClientConfig(db.url), max: 32 });
await floorPool.query(
  "CREATE TABLE bench_floor (id bigserial PRIMARY KEY, k text NOT NULL, v jsonb NOT NULL, at timestamptz NOT NULL)",
);
const cfgs: [string, ConstructorParameters<typeof PrismaIntentStore>[0]][] = [
  ["none", { databaseUrl: db.url, poolSize: 32, groupCommit: false, groupUpdates: false }],
  ["g2", { databaseUrl: db.url, poolSize: 32 }],
  ["g4", { databaseUrl: db.url, poolSize: 32, groupCommit: { maxInFlight: 4 }, groupUpdates: { maxInFlight: 4 } }],
  ["g8", { databaseUrl: db.url, poolSize: 32, groupCommit: { maxInFlight: 8 }, groupUpdates: { maxInFlight: 8 } }],
  ["claims-g4-only", { databaseUrl: db.url, poolSize: 32, groupCommit: { maxInFlight: 4 }, groupUpdates: false }],
];
const stats: Record<string, unknown> = {};
let n = 0;
const res: Record<string, number[]> = { floor: [] };
for (let round = 0; round < 3; round++) {
  const f = await concurrent(32, 1.5, () =>
    floorPool.query("INSERT INTO bench_floor (k, v, at) VALUES ($1, $2::jsonb, $3)", [`k-${n++}`, "{}", new Date()]),
  );
  res.floor!.push(f.perSecond);
  for (const [name, o] of cfgs) {
    const store = new PrismaIntentStore(o);
    for (const bg of [false, true]) {
      const ex = createExecutor({ store, tools: [tool], backgroundOutcomes: bg });
      const t = await concurrent(32, 1.5, (w) =>
        ex.call({
          runId: `c-${w}`,
          stepId: `s-${n++}`,
          tool: tool.name,
          args: { order_id: `a-${n}`, amount: 10 },
          deadline: Deadline.after(60000),
        }),
      );
      const label = `${name}${bg ? "+bg" : ""}`;
      res[label] = [...(res[label] ?? []), t.perSecond];
    }
    stats[name] = [store.claimBatchStats, store.updateBatchStats];
    await store.close();
  }
}
for (const [k, v] of Object.entries(res))
  console.log(
    k.padEnd(20),
    v.map((x) => Math.round(x)).join(" "),
    " median",
    Math.round([...v].sort((a, b) => a - b)[1]!),
  );
console.log(JSON.stringify(stats));
await floorPool.end();
await db.drop();
await remote.stop();
