import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claimSql, updateSql } from "./intent-sql.ts";
import { createTestDatabase, type TestDatabase } from "./test-database.ts";

const NOW = 1_767_225_600_000;

function newRecord(key: string) {
  return {
    key,
    runId: "run-1",
    stepId: key,
    tool: "refund",
    args: { order_id: "A-1", amount: "10.00" },
    identity: { order_id: "A-1", amount: "10.00" },
    attempt: 1,
    leaseUntilEpochMs: NOW + 60_000,
    compensation: null,
    createdAtEpochMs: NOW,
    traceId: null,
  };
}

describe("updateSql durability (real PostgreSQL)", () => {
  let db: TestDatabase;
  let client: pg.Client;
  beforeAll(async () => {
    db = await createTestDatabase();
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  async function commitSetting(key: string, durable: boolean): Promise<{ inTx: string; after: string }> {
    await client.query(claimSql("default", newRecord(key), [], NOW));
    await client.query("BEGIN");
    const { rows } = await client.query(
      updateSql("default", key, 1, { status: "SUCCEEDED", result: { ok: true } }, [], NOW + 1, { durable }),
    );
    expect(rows).toHaveLength(1);
    const inTx = (await client.query("SHOW synchronous_commit")).rows[0].synchronous_commit as string;
    await client.query("COMMIT");
    const after = (await client.query("SHOW synchronous_commit")).rows[0].synchronous_commit as string;
    return { inTx, after };
  }

  it("durable: false turns synchronous_commit off for the writing transaction only", async () => {
    expect(await commitSetting("k-async", false)).toEqual({ inTx: "off", after: "on" });
  });

  it("durable (the default) leaves synchronous_commit on", async () => {
    expect(await commitSetting("k-durable", true)).toEqual({ inTx: "on", after: "on" });
  });

  it("a version mismatch writes nothing, whatever the durability", async () => {
    await client.query(claimSql("default", newRecord("k-stale"), [], NOW));
    const { rows } = await client.query(
      updateSql("default", "k-stale", 7, { status: "SUCCEEDED" }, [], NOW + 1, { durable: false }),
    );
    expect(rows).toHaveLength(0);
  });
});
