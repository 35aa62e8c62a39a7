/**
 * Issue 19 §1: the overview's "still open" reads the human queue's own field (`needs_human`), as the
 * queue does. A record whose UNKNOWN was settled (found) but that waits for a person — an effect
 * found after its run was aborted, to be compensated — is in the queue, so it is still open; read raw
 * and from the rollups alike.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { refreshIntentRollups, statsOverview } from "../../src/queries/index.ts";
import { createTestDatabase, type TestDatabase } from "../../src/test-database.ts";

const HOUR = 3_600_000;
let db: TestDatabase;
let store: PrismaIntentStore;
let createdAt: number;

/** A record made ever-UNKNOWN, then settled `found`, waiting for a person or not. */
async function foundRecord(key: string, needsHuman: boolean): Promise<void> {
  const claim = await store.claim(
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
  const unknown = await store.update(key, 1, { status: "UNKNOWN" }, [], createdAt + 1);
  const error = needsHuman ? { code: "RUN_ABORTED" as const, message: "found after its run was aborted" } : null;
  const done = await store.update(
    key,
    unknown!.version,
    { status: "SUCCEEDED", resolution: "found", needsHuman, error, result: null, finishedAtEpochMs: createdAt + 2 },
    [],
    createdAt + 2,
  );
  expect(done).toMatchObject({ status: "SUCCEEDED", resolution: "found", needsHuman });
}

beforeAll(async () => {
  db = await createTestDatabase();
  store = new PrismaIntentStore({ databaseUrl: db.url, poolSize: 2 });
  createdAt = Date.now() - 2 * HOUR;
  await foundRecord("a".repeat(32), true);
  await foundRecord("b".repeat(32), false);
}, 60_000);

afterAll(async () => {
  await store?.close();
  await db?.drop();
});

const overview = async () => {
  const o = await statsOverview(store.prisma, {
    fromEpochMs: createdAt - HOUR,
    toEpochMs: createdAt + HOUR,
    staleNowEpochMs: Date.now(),
  });
  return o.tools.find((t) => t.tool === "refund")!;
};

describe("the overview's open count reads needs_human (issue 19)", () => {
  it("a SUCCEEDED record waiting for a correction is open, read raw and from the rollups", async () => {
    const raw = await overview();
    expect(raw.unknownCount).toBe(2);
    expect(raw.resolutions).toMatchObject({ found: 1, open: 1, other: 0 });
    for (let i = 0; i < 50; i++) if ((await refreshIntentRollups(store.prisma)).caughtUp) break;
    const rolled = await overview();
    expect(rolled.unknownCount).toBe(2);
    expect(rolled.resolutions).toMatchObject({ found: 1, open: 1, other: 0 });
  });
});
