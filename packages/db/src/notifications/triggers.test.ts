import type { IntentRecord } from "@tristate/core";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OpenDatabase } from "../open-database.ts";
import { claim, newRecord, openTestFacade, outboxEvents } from "./test-support.ts";

/**
 * The outbox triggers on intent_records (migration 20261202135402_notifications): events in the
 * change's own transaction, one per change, whatever path wrote it.
 */
describe("notification outbox triggers (real PostgreSQL)", () => {
  let facade: Awaited<ReturnType<typeof openTestFacade>>;
  let db: OpenDatabase;
  let pool: pg.Pool;
  beforeAll(async () => {
    facade = await openTestFacade();
    db = facade.db;
    pool = facade.pool;
  });
  afterAll(async () => {
    await facade?.close();
  });

  const toQueue = { status: "UNKNOWN", needsHuman: true, error: { code: "NO_PROBE", message: "no probe" } } as const;

  it("a record entering the human queue raises one human_queue event with its subject; ordinary writes raise none", async () => {
    const store = db.intents("t-queue");
    const ok = await claim(store, newRecord());
    await store.update(ok.key, ok.version, { status: "SUCCEEDED", finishedAtEpochMs: Date.now() }, [], Date.now());
    const failed = await claim(store, newRecord());
    await store.update(failed.key, failed.version, { status: "FAILED_NO_EFFECT" }, [], Date.now(), { durable: false });
    expect(await outboxEvents(pool, "t-queue")).toEqual([]);

    const rec = await claim(store, newRecord({ runId: "run-q", stepId: "pay", tool: "issue_refund", attempt: 1 }));
    const queued = (await store.update(rec.key, rec.version, toQueue, [], Date.now()))!;
    // Writes while it waits (a sweep, a note) raise nothing more.
    await store.update(rec.key, queued.version, { reconcileSweeps: 3 }, [], Date.now());
    const events = await outboxEvents(pool, "t-queue");
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      kind: "human_queue",
      fanned_out: false,
      subject: { key: rec.key, runId: "run-q", stepId: "pay", tool: "issue_refund", attempt: 1, code: "NO_PROBE" },
    });
    expect(events[0]!.id).toMatch(/^nev_[0-9a-f]{32}$/);
  });

  it("leaving the queue and entering it again raises a second event with another id", async () => {
    const store = db.intents("t-again");
    const rec = await claim(store, newRecord());
    const q1 = (await store.update(rec.key, rec.version, toQueue, [], Date.now()))!;
    const out = (await store.update(
      rec.key,
      q1.version,
      { needsHuman: false, attempt: 2, status: "PENDING" },
      [],
      Date.now(),
    ))!;
    await store.update(rec.key, out.version, { ...toQueue }, [], Date.now());
    const events = await outboxEvents(pool, "t-again");
    expect(events.map((e) => e.kind)).toEqual(["human_queue", "human_queue"]);
    expect(new Set(events.map((e) => e.id)).size).toBe(2);
  });

  it("a rolled-back change raises nothing (same transaction)", async () => {
    const store = db.intents("t-rollback");
    const rec = await claim(store, newRecord());
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      await client.query(
        "UPDATE intent_records SET needs_human = true, status = 'UNKNOWN', version = version + 1 WHERE tenant = $1 AND key = $2",
        ["t-rollback", rec.key],
      );
      const { rows } = await client.query(
        "SELECT count(*)::int AS n FROM notification_events WHERE tenant = 't-rollback'",
      );
      expect(rows[0].n).toBe(1);
      await client.query("ROLLBACK");
    } finally {
      client.release();
    }
    expect(await outboxEvents(pool, "t-rollback")).toEqual([]);
  });

  it("contradicting evidence raises evidence_contradicts, not human_queue — also for a record already waiting", async () => {
    const store = db.intents("t-contra");
    const settled = await claim(store, newRecord());
    const done = (await store.update(settled.key, settled.version, { status: "SUCCEEDED" }, [], Date.now()))!;
    const contra = { code: "CONTRADICTING_EVIDENCE", message: "a later probe says it did not happen" } as const;
    await store.update(settled.key, done.version, { needsHuman: true, error: contra }, [], Date.now());

    const waiting = await claim(store, newRecord());
    const q = (await store.update(waiting.key, waiting.version, toQueue, [], Date.now()))!;
    await store.update(
      waiting.key,
      q.version,
      { error: contra, status: "SUCCEEDED", resolution: "found" },
      [],
      Date.now(),
    );

    const events = await outboxEvents(pool, "t-contra");
    expect(events.map((e) => [e.kind, e.subject.key])).toEqual([
      ["evidence_contradicts", settled.key],
      ["human_queue", waiting.key],
      ["evidence_contradicts", waiting.key],
    ]);
    expect(events[0]!.subject.code).toBe("CONTRADICTING_EVIDENCE");
  });

  it("a compensation that ends FAILED_NO_EFFECT or waits for a person raises compensation_failed once", async () => {
    const store = db.intents("t-comp");
    const original = "f".repeat(32);
    const c1 = await claim(store, newRecord({ stepId: `compensate:${original}`, tool: "cancel_hotel" }));
    const f1 = (await store.update(c1.key, c1.version, { status: "FAILED_NO_EFFECT" }, [], Date.now()))!;
    // A person looking at it later (FAILED_NO_EFFECT -> in the queue) is the same failure: no second event.
    await store.update(c1.key, f1.version, { needsHuman: true }, [], Date.now());
    const c2 = await claim(store, newRecord({ stepId: `correct:${original}`, tool: "cancel_hotel" }));
    const q2 = (await store.update(c2.key, c2.version, toQueue, [], Date.now()))!;
    await store.update(c2.key, q2.version, { status: "FAILED_NO_EFFECT", needsHuman: false }, [], Date.now());
    const c3 = await claim(store, newRecord({ stepId: `compensate:${"e".repeat(32)}`, tool: "cancel_hotel" }));
    await store.update(c3.key, c3.version, { status: "SUCCEEDED" }, [], Date.now());

    const events = await outboxEvents(pool, "t-comp");
    expect(events.map((e) => [e.kind, e.subject.key])).toEqual([
      ["compensation_failed", c1.key],
      ["compensation_failed", c2.key],
    ]);
    expect(events[0]!.subject).toMatchObject({ compensatedKey: original, status: "FAILED_NO_EFFECT" });
    expect(events[1]!.subject).toMatchObject({ compensatedKey: original, needsHuman: true });
  });

  /** Every column of intent_records (the archive has the same ones). */
  const COLUMNS = `tenant, key, run_id, step_id, tool, args, identity, status, attempt, lease_until_at, recheck_at, result,
    error, compensation, resolution, needs_human, reconcile_sweeps, version, created_at, updated_at, finished_at, trace_id,
    sent_key, settles_at, ever_unknown`;

  it("a row inserted waiting for a person raises once; the same row version written again (a restore) raises no second", async () => {
    const store = db.intents("t-insert");
    const rec = await claim(store, newRecord());
    const queued = (await store.update(rec.key, rec.version, toQueue, [], Date.now()))!;
    expect(await outboxEvents(pool, "t-insert")).toHaveLength(1);
    // Moved out and back as it was (what archiving and a restore do to a row): same key, same version.
    await pool.query(
      `WITH gone AS (DELETE FROM intent_records WHERE tenant = $1 AND key = $2 RETURNING *)
       INSERT INTO intent_records_archive (${COLUMNS}) SELECT ${COLUMNS} FROM gone`,
      ["t-insert", rec.key],
    );
    await pool.query(
      `WITH back AS (DELETE FROM intent_records_archive WHERE tenant = $1 AND key = $2 RETURNING *)
       INSERT INTO intent_records (${COLUMNS}) SELECT ${COLUMNS} FROM back`,
      ["t-insert", rec.key],
    );
    expect((await store.get(rec.key))?.version).toBe(queued.version);
    const events = await outboxEvents(pool, "t-insert");
    expect(events.map((e) => e.kind)).toEqual(["human_queue"]);
    // A fresh row inserted already waiting raises its own.
    const other = newRecord();
    await pool.query(
      `INSERT INTO intent_records (tenant, key, run_id, step_id, tool, args, identity, status, attempt, lease_until_at,
         needs_human, version, created_at, updated_at)
       VALUES ('t-insert', $1, 'r', 'inserted', 'issue_refund', '{}', '{}', 'UNKNOWN', 1, now(), true, 1, now(), now())`,
      [other.key],
    );
    expect((await outboxEvents(pool, "t-insert")).map((e) => e.subject.key)).toEqual([rec.key, other.key]);
  });

  it("the executor's own notify tools raise nothing", async () => {
    const store = db.intents("t-internal");
    const rec = await claim(store, newRecord({ tool: "tristate.notify.webhook", runId: "notify:nch_1" }));
    await store.update(rec.key, rec.version, toQueue, [], Date.now());
    expect(await outboxEvents(pool, "t-internal")).toEqual([]);
  });

  it("the operator store's action and the sweeper's claimStale each raise one event per change", async () => {
    const tenant = "t-paths";
    const store = db.intents(tenant);
    const ops = db.operators(tenant);
    // Sweeper: an expired PENDING taken to UNKNOWN does not queue (no event); an operator then resends.
    const rec = await claim(store, newRecord({ leaseUntilEpochMs: Date.now() - 1000 }));
    const taken = await store.claimStale({
      nowEpochMs: await db.clockEpochMs(),
      limit: 10,
      leaseUntilEpochMs: Date.now() + 60_000,
    });
    expect(taken.map((r) => r.key)).toContain(rec.key);
    expect(await outboxEvents(pool, tenant)).toEqual([]);
    const current: IntentRecord = (await store.get(rec.key))!;
    const queued = (await store.update(rec.key, current.version, toQueue, [], Date.now()))!;
    // The operator confirms the effect: it leaves the queue (no event); a contradiction later reopens it.
    const applied = await ops.applyOperatorAction({
      key: rec.key,
      expectedVersion: queued.version,
      patch: { status: "SUCCEEDED", resolution: "human_confirmed_effect", needsHuman: false, error: null },
      events: [],
      nowEpochMs: Date.now(),
      audit: { operatorActionId: "op-1", actorKeyId: "k1", actorName: "ana", action: "confirm_effect", note: "seen" },
    });
    expect(applied.kind).toBe("applied");
    const events = await outboxEvents(pool, tenant);
    expect(events.map((e) => e.kind)).toEqual(["human_queue"]);
  });
});

describe("notification tables' indexes", () => {
  let facade: Awaited<ReturnType<typeof openTestFacade>>;
  beforeAll(async () => {
    facade = await openTestFacade();
  });
  afterAll(async () => {
    await facade?.close();
  });

  it("the tenant leads every key and index of the notification tables", async () => {
    const { rows } = await facade.pool.query<{ indexdef: string }>(
      "SELECT indexdef FROM pg_indexes WHERE tablename LIKE 'notification\\_%'",
    );
    expect(rows.length).toBe(9);
    for (const { indexdef } of rows) expect(indexdef).toMatch(/\(tenant[,)]/);
  });
});
