/**
 * Issue 22 §3: the overview fits its default window to the data it has, so it needs the oldest
 * record's creation time — per tenant, live or archived.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { oldestRecord } from "../../src/queries/oldest-record.ts";
import { archiveIntents } from "../../src/rollups/archive-intents.ts";
import { createTestDatabase, type TestDatabase } from "../../src/test-database.ts";

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
let db: TestDatabase;
let store: PrismaIntentStore;
const now = Date.now();

/** A settled record of `tenant` created (and last written) at `createdAt`. */
async function record(tenant: string, key: string, createdAt: number): Promise<void> {
  const s = store.forTenant(tenant);
  const claim = await s.claim(
    {
      key,
      runId: `run-${key.slice(0, 6)}`,
      stepId: "step-1",
      tool: "refund",
      args: {},
      identity: {},
      attempt: 1,
      leaseUntilEpochMs: createdAt + 30_000,
      compensation: null,
      createdAtEpochMs: createdAt,
      traceId: null,
    },
    [],
    createdAt,
  );
  if (!claim.claimed) throw new Error("expected a fresh claim");
  await s.update(key, 1, { status: "SUCCEEDED", result: null, finishedAtEpochMs: createdAt + 1 }, [], createdAt + 1);
}

beforeAll(async () => {
  db = await createTestDatabase();
  store = new PrismaIntentStore({ databaseUrl: db.url, poolSize: 2 });
}, 60_000);

afterAll(async () => {
  await store?.close();
  await db?.drop();
});

it("answers null on an empty database, then the oldest creation per tenant and over all, archived ones included", async () => {
  expect(await oldestRecord(store.prisma)).toEqual({ oldestCreatedAtEpochMs: null });
  expect(await oldestRecord(store.prisma, { tenant: "young" })).toEqual({ oldestCreatedAtEpochMs: null });

  await record("young", "a".repeat(32), now - 5 * MINUTE);
  await record("young", "b".repeat(32), now - 2 * MINUTE);
  await record("older", "c".repeat(32), now - 3 * 60 * MINUTE);
  expect(await oldestRecord(store.prisma, { tenant: "young" })).toEqual({ oldestCreatedAtEpochMs: now - 5 * MINUTE });
  expect(await oldestRecord(store.prisma, { tenant: "older" })).toEqual({
    oldestCreatedAtEpochMs: now - 3 * 60 * MINUTE,
  });
  expect(await oldestRecord(store.prisma)).toEqual({ oldestCreatedAtEpochMs: now - 3 * 60 * MINUTE });

  // A record moved to the archive still counts: the database is that old.
  await record("young", "d".repeat(32), now - 40 * DAY);
  const archived = await archiveIntents(store.prisma, { olderThanEpochMs: now - 30 * DAY });
  expect(archived.moved).toBe(1);
  expect(await oldestRecord(store.prisma, { tenant: "young" })).toEqual({ oldestCreatedAtEpochMs: now - 40 * DAY });
  expect(await oldestRecord(store.prisma, { tenant: "older" })).toEqual({
    oldestCreatedAtEpochMs: now - 3 * 60 * MINUTE,
  });
});
