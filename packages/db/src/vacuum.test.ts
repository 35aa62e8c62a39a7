import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { openDatabase } from "./open-database.ts";
import { startVacuumLoop, vacuumDeadRows } from "./vacuum.ts";

it("embedded (no autovacuum): the dead rows outcome writes leave are vacuumed once past autovacuum's threshold", async () => {
  const dataDir = await mkdtemp(join(tmpdir(), "tristate-vacuum-"));
  const db = await openDatabase({ embedded: true, dataDir });
  try {
    const query = (text: string) => db.store.pool.query(text);
    const NOW = Date.now();
    for (let i = 0; i < 300; i++) {
      const key = i.toString(16).padStart(32, "0");
      const rec = {
        key,
        runId: "run",
        stepId: `s-${i}`,
        tool: "refund",
        args: { order_id: `A-${i}` },
        identity: { order_id: `A-${i}` },
        attempt: 1,
        leaseUntilEpochMs: NOW + 5_000,
        compensation: null,
        createdAtEpochMs: NOW,
        traceId: null,
      };
      expect((await db.store.claim(rec, [], NOW)).claimed).toBe(true);
      // The outcome write: a new row version (status is indexed), the old one dead.
      await db.store.update(key, 1, { status: "SUCCEEDED", result: i }, [], NOW + 1, { durable: false });
    }
    const dead = async () => {
      await query("SELECT pg_stat_force_next_flush()");
      const { rows } = await query(
        "SELECT n_dead_tup::int AS n FROM pg_stat_user_tables WHERE relname = 'intent_records'",
      );
      return (rows[0] as { n: number }).n;
    };
    expect(await dead()).toBeGreaterThanOrEqual(300);
    const vacuumed: string[][] = [];
    const loop = startVacuumLoop(query, { intervalMs: 50, onVacuum: (t) => vacuumed.push(t) });
    await expect.poll(() => vacuumed.length, { timeout: 10_000 }).toBeGreaterThan(0);
    await loop.stop();
    expect(vacuumed[0]).toContain("public.intent_records");
    expect(await dead()).toBe(0);
    // Below the threshold (50 + 20 % of the live rows) nothing is vacuumed.
    expect(await vacuumDeadRows(query)).toEqual([]);
    expect(await db.store.get((299).toString(16).padStart(32, "0"))).toMatchObject({
      status: "SUCCEEDED",
      result: 299,
    });
  } finally {
    await db.close();
    await rm(dataDir, { recursive: true, force: true });
  }
}, 60_000);
