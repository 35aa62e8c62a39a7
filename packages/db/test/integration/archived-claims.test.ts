/**
 * Issue 20 §3 (DESIGN.md rule 15): a dedup scope never lives in one table the archive empties. A
 * settled refund moved to `intent_records_archive` (by the archiver itself, `archiveIntents`), then
 * the same call again: a replay, one effect at the remote (rule 1); the same (run, step, tool) with
 * another identity: a conflict, nothing sent (rule 4) — through the single claim, the group-commit
 * batch and PGlite; and the archiver racing the claim (its move commits while the claim's INSERT
 * waits for it) still gives one effect.
 */
import { createExecutor, Deadline, type Envelope, type Executor } from "@tristate/core";
import { type FakeRemote, refundTool, startFakeRemote } from "@tristate/testing";
import pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type EmbeddedPostgres, startEmbeddedPostgres } from "../../src/embedded-postgres.ts";
import { applyMigrations } from "../../src/migrate/migrations.ts";
import { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { archiveIntents } from "../../src/queries/index.ts";
import { createTestDatabase, type TestDatabase } from "../../src/test-database.ts";
import { Cleanup } from "./helpers.ts";

const REFUND = { order_id: "A-7001", amount: "49.90", currency: "EUR" };
/** The archiver's cut far in the future: every settled record moves. */
const EVERYTHING = () => ({ olderThanEpochMs: Date.now() + 3_600_000 });

const call = (executor: Executor, args: Record<string, unknown>, runId = "run-archived"): Promise<Envelope> =>
  executor.call({ runId, stepId: "refund", tool: "issue_refund", args, deadline: Deadline.after(10_000) });

/** Where the tenant's records of the run are now: live and archived counts (on the store's own pool). */
async function placeOf(store: PrismaIntentStore, runId = "run-archived"): Promise<{ live: number; archived: number }> {
  const { rows } = await store.pool.query<{ live: number; archived: number }>(
    `SELECT (SELECT count(*)::int FROM intent_records WHERE run_id = $1) AS live,
            (SELECT count(*)::int FROM intent_records_archive WHERE run_id = $1) AS archived`,
    [runId],
  );
  return rows[0] as { live: number; archived: number };
}

/** The scenarios every claim path must pass, on a store of the path under test. */
function archivedScenarios(setup: () => Promise<{ store: PrismaIntentStore; remote: FakeRemote }>) {
  let store: PrismaIntentStore;
  let remote: FakeRemote;
  let executor: Executor;
  beforeEach(async () => {
    ({ store, remote } = await setup());
    executor = createExecutor({ store, tools: [refundTool(remote)] });
  });

  it("an archived SUCCEEDED refund: the repeat replays it (one effect); another identity in its step is a conflict", async () => {
    const first = await call(executor, REFUND);
    expect(first).toMatchObject({ status: "SUCCEEDED", replayed: false });
    expect((await archiveIntents(store.prisma, EVERYTHING())).moved).toBe(1);
    expect(await placeOf(store)).toEqual({ live: 0, archived: 1 });

    const repeat = await call(executor, { ...REFUND, order_id: "a-7001" });
    expect(repeat).toMatchObject({ status: "SUCCEEDED", replayed: true, idempotency_key: first.idempotency_key });
    expect(repeat.result).toEqual(first.result);
    expect(remote.effects).toHaveLength(1);
    expect(remote.posts).toBe(1);

    // Archived again, then the same step with another amount: refused, nothing sent.
    await archiveIntents(store.prisma, EVERYTHING());
    const other = await call(executor, { ...REFUND, amount: "10.00" });
    expect(other).toMatchObject({ status: "FAILED_NO_EFFECT", retry_safe: false });
    expect(other.error?.code).toBe("IDEMPOTENCY_CONFLICT");
    expect(other.error?.message).toContain(first.idempotency_key);
    expect(remote.posts).toBe(1);
    // One record of the step in all: the first, in exactly one table.
    const place = await placeOf(store);
    expect(place.live + place.archived).toBe(1);
  });

  it("a record a repeat moved back is not archived again under the executor: it waits for the next cut", async () => {
    const first = await call(executor, REFUND);
    // Thirty days old: well past a one-day cut.
    await store.pool.query(
      "UPDATE intent_records SET created_at = created_at - interval '30 days', updated_at = updated_at - interval '30 days'",
    );
    const cut = { olderThanEpochMs: Date.now() - 86_400_000 };
    expect((await archiveIntents(store.prisma, cut)).moved).toBe(1);
    const repeat = await call(executor, REFUND);
    expect(repeat).toMatchObject({ status: "SUCCEEDED", replayed: true, idempotency_key: first.idempotency_key });
    expect((await archiveIntents(store.prisma, cut)).moved).toBe(0);
    expect(await placeOf(store)).toEqual({ live: 1, archived: 0 });
    expect(remote.effects).toHaveLength(1);
  });

  it("an archived FAILED_NO_EFFECT refund: the repeat is the record's next attempt under its key (rule 3), one effect", async () => {
    remote.fault({ commit: false, answer: 400 });
    const first = await call(executor, REFUND);
    expect(first).toMatchObject({ status: "FAILED_NO_EFFECT", retry_safe: true });
    expect((await archiveIntents(store.prisma, EVERYTHING())).moved).toBe(1);
    const again = await call(executor, REFUND);
    expect(again).toMatchObject({ status: "SUCCEEDED", attempt: 2, idempotency_key: first.idempotency_key });
    expect(remote.effects).toHaveLength(1);
    expect(await placeOf(store)).toEqual({ live: 1, archived: 0 });
    const timeline = await store.listEvents(first.idempotency_key);
    expect(timeline.filter((e) => e.type === "created")).toHaveLength(2); // the first attempt's timeline came back too
  });
}

describe("archived records still deduplicate (rule 15), real PostgreSQL", () => {
  const cleanup = new Cleanup();
  afterEach(() => cleanup.run());
  const onPostgres = (groupCommit: boolean) => async () => {
    const db: TestDatabase = cleanup.add(await createTestDatabase(), (d) => d.drop());
    const remote = cleanup.add(await startFakeRemote(), (r) => r.close());
    const store = cleanup.add(new PrismaIntentStore({ databaseUrl: db.url, poolSize: 3, groupCommit }), (s) =>
      s.close(),
    );
    return { store, remote, url: db.url };
  };

  describe("the single claim", () => archivedScenarios(onPostgres(false)));
  describe("the group-commit claim batch", () => archivedScenarios(onPostgres(true)));

  for (const groupCommit of [false, true]) {
    it(`the archiver moves the step while the repeat's claim waits on it (${groupCommit ? "batch" : "single"}): a replay, one effect`, async () => {
      const { store, remote, url } = await onPostgres(groupCommit)();
      const executor = createExecutor({ store, tools: [refundTool(remote)] });
      const first = await call(executor, REFUND);
      // The archiver's move, held open: the live row is deleted, the archive row not yet committed.
      const archiver = cleanup.add(new PrismaIntentStore({ databaseUrl: url, poolSize: 1 }), (s) => s.close());
      let commit!: () => void;
      const held = new Promise<void>((resolve) => {
        commit = resolve;
      });
      let moved = 0;
      const move = archiver.prisma.$transaction(
        async (tx) => {
          moved = (await archiveIntents(tx as never, EVERYTHING())).moved;
          await held;
        },
        { timeout: 60_000 },
      );
      while (moved === 0) await new Promise((r) => setTimeout(r, 5));
      const repeat = call(executor, REFUND);
      // The repeat's INSERT waits for the archiver's delete (a lock wait), then the archiver commits.
      await waitForLockWait(url);
      commit();
      await move;
      expect(await repeat).toMatchObject({
        status: "SUCCEEDED",
        replayed: true,
        idempotency_key: first.idempotency_key,
      });
      expect(remote.effects).toHaveLength(1);
      const place = await placeOf(store);
      expect(place.live + place.archived).toBe(1);
    });
  }
});

describe("archived records still deduplicate (rule 15), embedded PGlite", () => {
  let embedded: EmbeddedPostgres;
  const cleanup = new Cleanup();
  beforeAll(async () => {
    embedded = await startEmbeddedPostgres("memory://");
    await applyMigrations(embedded.url);
  });
  afterAll(async () => {
    await embedded?.close();
  });
  afterEach(async () => {
    await cleanup.run();
    const client = new pg.Client(embedded.url);
    await client.connect();
    await client.query("TRUNCATE intent_events, intent_records, intent_events_archive, intent_records_archive");
    await client.end();
  });
  archivedScenarios(async () => {
    const remote = cleanup.add(await startFakeRemote(), (r) => r.close());
    const store = cleanup.add(new PrismaIntentStore({ databaseUrl: embedded.url, singleSession: true }), (s) =>
      s.close(),
    );
    return { store, remote };
  });
});

/** Waits until some backend of the database waits for a lock (the claim's INSERT behind the archiver). */
async function waitForLockWait(url: string): Promise<void> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    for (;;) {
      const { rows } = await client.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      );
      if ((rows[0]?.n ?? 0) > 0) return;
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    await client.end();
  }
}
