/**
 * Shared parts of the notifications tests: a real test database opened as {@link TristateDatabase},
 * records claimed and changed through the intent store's own write paths, and the outbox read back.
 */
import { randomBytes } from "node:crypto";
import type { IntentRecord, IntentStore, NewIntentRecord } from "@tristate/core";
import type pg from "pg";
import { type OpenDatabase, openDatabase } from "../open-database.ts";
import { createTestDatabase, type TestDatabase } from "../test-database.ts";

/** A test database and the facade over it. Call `close()` after. */
export async function openTestFacade(): Promise<{ db: OpenDatabase; pool: pg.Pool; close(): Promise<void> }> {
  const testDb: TestDatabase = await createTestDatabase();
  const db = await openDatabase({ databaseUrl: testDb.url, poolSize: 6 });
  return {
    db,
    pool: db.store.pool,
    async close() {
      await db.close();
      await testDb.drop();
    },
  };
}

let n = 0;

/** A new PENDING record to claim (a fresh key and step each call). */
export function newRecord(over: Partial<NewIntentRecord> = {}): NewIntentRecord {
  const now = Date.now();
  n += 1;
  return {
    key: randomBytes(16).toString("hex"),
    runId: "run-notify",
    stepId: `s${n}`,
    tool: "issue_refund",
    args: { order_id: `A-${n}` },
    identity: { order_id: `A-${n}` },
    attempt: 1,
    leaseUntilEpochMs: now + 60_000,
    compensation: null,
    createdAtEpochMs: now,
    traceId: null,
    ...over,
  };
}

/** Claims `record` in `store` (the claim batch path). @throws when it was not claimed. */
export async function claim(store: IntentStore, record: NewIntentRecord): Promise<IntentRecord> {
  const result = await store.claim(record, [], Date.now());
  if (!result.claimed) throw new Error(`not claimed: ${record.key}`);
  return result.record;
}

/** The outbox's events of `tenant`, oldest first. */
export async function outboxEvents(
  pool: pg.Pool,
  tenant: string,
): Promise<{ id: string; kind: string; subject: Record<string, unknown>; fanned_out: boolean }[]> {
  const { rows } = await pool.query(
    "SELECT id, kind, subject, fanned_out FROM notification_events WHERE tenant = $1 ORDER BY occurred_at, id",
    [tenant],
  );
  return rows;
}
