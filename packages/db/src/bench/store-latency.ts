/**
 * `pnpm --filter @tristate/db run bench:store [n]` — sequential latency of the intent log's hot path
 * (claim, outcome update durable and not, get) on a fresh database of the local PostgreSQL.
 */
import { randomBytes } from "node:crypto";
import { createPrismaIntentStore } from "../prisma-intent-store.ts";
import { createTestDatabase } from "../test-database.ts";

function summary(name: string, samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(3);
  const mean = (samples.reduce((a, b) => a + b, 0) / samples.length).toFixed(3);
  return `${name.padEnd(24)} n=${samples.length} mean=${mean} p50=${at(0.5)} p99=${at(0.99)} ms`;
}

async function main(n: number): Promise<void> {
  const db = await createTestDatabase();
  const store = createPrismaIntentStore({ databaseUrl: db.url });
  try {
    const times = { claim: [] as number[], durable: [] as number[], nonDurable: [] as number[], get: [] as number[] };
    for (let i = 0; i < n + 100; i++) {
      const key = randomBytes(16).toString("hex");
      const now = Date.now();
      const record = {
        key,
        runId: `run-${i}`,
        stepId: "step-1",
        tool: "refund",
        args: { order_id: `A-${i}`, amount: "10.00" },
        identity: { order_id: `A-${i}`, amount: "10.00" },
        attempt: 1,
        leaseUntilEpochMs: now + 5_000,
        compensation: null,
        createdAtEpochMs: now,
        traceId: null,
      };
      const created = { key, type: "created" as const, atEpochMs: now, data: {} };
      const outcome = { key, type: "outcome" as const, atEpochMs: now, data: { outcome: "SUCCEEDED" } };
      const patch = { status: "SUCCEEDED" as const, result: { ok: true }, finishedAtEpochMs: now };
      let t = performance.now();
      await store.claim(record, [created], now);
      const claim = performance.now() - t;
      t = performance.now();
      await store.update(key, 1, patch, [outcome], now, { durable: i % 2 === 0 });
      const update = performance.now() - t;
      t = performance.now();
      await store.get(key);
      const get = performance.now() - t;
      if (i < 100) continue; // warm-up
      times.claim.push(claim);
      (i % 2 === 0 ? times.durable : times.nonDurable).push(update);
      times.get.push(get);
    }
    console.log(summary("claim (+1 event)", times.claim));
    console.log(summary("update durable", times.durable));
    console.log(summary("update durable:false", times.nonDurable));
    console.log(summary("get", times.get));
  } finally {
    await store.close();
    await db.drop();
  }
}

await main(Number(process.argv[2] ?? 2000));
