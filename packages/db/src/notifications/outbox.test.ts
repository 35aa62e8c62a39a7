import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OpenDatabase } from "../open-database.ts";
import { MAX_GROUP_EVENTS } from "./fan-out.ts";
import { PgNotificationOutbox } from "./outbox.ts";
import type { ClaimedDelivery } from "./ports.ts";
import { claim, newRecord, openTestFacade, outboxEvents } from "./test-support.ts";

const toQueue = { status: "UNKNOWN", needsHuman: true, error: { code: "NO_PROBE", message: "no probe" } } as const;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every delivery of a tenant, oldest first. */
async function deliveries(pool: pg.Pool, tenant: string) {
  const { rows } = await pool.query<{
    id: string;
    channel_id: string;
    event_ids: string[];
    status: string;
    attempts: number;
  }>(
    "SELECT id, channel_id, event_ids, status, attempts FROM notification_deliveries WHERE tenant = $1 ORDER BY scheduled_at, id",
    [tenant],
  );
  return rows;
}

/** The outbox on a real database: fan-out, grouping, claims by replicas, leases, results, conditions. */
describe("notification outbox (real PostgreSQL)", () => {
  let facade: Awaited<ReturnType<typeof openTestFacade>>;
  let db: OpenDatabase;
  let pool: pg.Pool;
  let replicaPool: pg.Pool;
  let replica: PgNotificationOutbox;
  beforeAll(async () => {
    facade = await openTestFacade();
    db = facade.db;
    pool = facade.pool;
    replicaPool = new pg.Pool({ connectionString: db.url, max: 4 });
    replica = new PgNotificationOutbox(replicaPool);
  });
  afterAll(async () => {
    await replicaPool?.end();
    await facade?.close();
  });
  /** Takes everything due now (a few rounds), so one test's deliveries do not leak into the next. */
  async function drain(): Promise<ClaimedDelivery[]> {
    const all: ClaimedDelivery[] = [];
    for (;;) {
      const got = await db.notificationOutbox.claimDue({ limit: 100, leaseMs: 60_000, groupWindowMs: 60_000 });
      for (const c of got) await db.notificationOutbox.complete(c.delivery.id, { delivered: true });
      all.push(...got);
      if (got.length === 0) return all;
    }
  }

  it("a record entering the queue reaches a subscribed channel with its secret and event; delivered is logged", async () => {
    await drain();
    const n = db.notifications("o-basic");
    const hook = await n.createChannel({
      kind: "webhook",
      name: "h",
      url: "https://a.example/h",
      events: ["human_queue"],
    });
    await n.createChannel({ kind: "email", name: "e", to: ["a@b.co"], events: ["compensation_failed"] });
    const store = db.intents("o-basic");
    const rec = await claim(store, newRecord());
    await store.update(rec.key, rec.version, toQueue, [], Date.now());

    const claimed = await db.notificationOutbox.claimDue({ limit: 10, leaseMs: 30_000, groupWindowMs: 60_000 });
    expect(claimed).toHaveLength(1);
    const [c] = claimed;
    expect(c!.channel).toEqual(hook.channel);
    expect(c!.secret).toBe(hook.secret);
    expect(c!.delivery).toMatchObject({
      tenant: "o-basic",
      channelId: hook.channel.id,
      kind: "human_queue",
      status: "pending",
      attempts: 1,
    });
    expect(c!.events).toHaveLength(1);
    expect(c!.events[0]).toMatchObject({ kind: "human_queue", tenant: "o-basic", subject: { key: rec.key } });
    expect(c!.delivery.eventIds).toEqual([c!.events[0]!.id]);
    const clock = await db.clockEpochMs();
    expect(c!.leaseUntilEpochMs).toBeGreaterThan(clock + 25_000);
    expect(c!.leaseUntilEpochMs).toBeLessThan(clock + 35_000);
    expect((await outboxEvents(pool, "o-basic")).every((e) => e.fanned_out)).toBe(true);

    await db.notificationOutbox.complete(c!.delivery.id, { delivered: true });
    const [logged] = (await n.listDeliveries()).items;
    expect(logged).toMatchObject({ id: c!.delivery.id, status: "delivered", attempts: 1, nextAttemptAtEpochMs: null });
    expect(logged!.deliveredAtEpochMs).not.toBeNull();
    expect(await db.notificationOutbox.claimDue({ limit: 10, leaseMs: 30_000, groupWindowMs: 60_000 })).toEqual([]);
  });

  it("a burst of 500 records entering the queue becomes a few grouped deliveries per channel, each event once", async () => {
    await drain();
    const tenant = "o-burst";
    const n = db.notifications(tenant);
    const a = (await n.createChannel({ kind: "webhook", name: "a", url: "https://a.example/h" })).channel;
    const b = (await n.createChannel({ kind: "slack", name: "b", url: "https://b.example/h" })).channel;
    const store = db.intents(tenant);
    // Claims and outcome writes go concurrently: the claim and update batchers' multi-row statements.
    const records = await Promise.all(Array.from({ length: 500 }, () => claim(store, newRecord())));
    const windowMs = 1500;
    const started = Date.now();
    const taken: ClaimedDelivery[] = [];
    for (let i = 0; i < 5; i++) {
      const slice = records.slice(i * 100, (i + 1) * 100);
      await Promise.all(slice.map((r) => store.update(r.key, r.version, toQueue, [], Date.now(), { durable: false })));
      taken.push(...(await db.notificationOutbox.claimDue({ limit: 50, leaseMs: 60_000, groupWindowMs: windowMs })));
      await sleep(300);
    }
    // Until every group's window has ended.
    while (Date.now() - started < 5 * 300 + 2 * windowMs) {
      taken.push(...(await db.notificationOutbox.claimDue({ limit: 50, leaseMs: 60_000, groupWindowMs: windowMs })));
      await sleep(200);
    }
    const elapsed = Date.now() - started;
    const events = await outboxEvents(pool, tenant);
    expect(events).toHaveLength(500);
    for (const channel of [a, b]) {
      const mine = taken.filter((t) => t.channel.id === channel.id);
      // The first event at once, then at most one group per window.
      expect(mine.length).toBeGreaterThanOrEqual(2);
      expect(mine.length).toBeLessThanOrEqual(2 + Math.ceil(elapsed / windowMs));
      expect(mine[0]!.events).toHaveLength(1);
      const ids = mine.flatMap((t) => t.delivery.eventIds);
      expect(ids).toHaveLength(500);
      expect(new Set(ids)).toEqual(new Set(events.map((e) => e.id)));
      expect(mine.flatMap((t) => t.events.map((e) => e.id))).toEqual(ids);
    }
    expect(await deliveries(pool, tenant)).toHaveLength(taken.length);
  });

  it("with the default 60 s window, 500 records queued within seconds are 2 deliveries: the first at once, 499 grouped", async () => {
    await drain();
    const tenant = "o-minute";
    const n = db.notifications(tenant);
    const { channel } = await n.createChannel({
      kind: "email",
      name: "m",
      to: ["ops@example.com"],
      events: ["human_queue"],
    });
    const store = db.intents(tenant);
    const records = await Promise.all(Array.from({ length: 500 }, () => claim(store, newRecord())));
    const taken: ClaimedDelivery[] = [];
    for (let i = 0; i < 5; i++) {
      const slice = records.slice(i * 100, (i + 1) * 100);
      await Promise.all(slice.map((r) => store.update(r.key, r.version, toQueue, [], Date.now(), { durable: false })));
      taken.push(...(await db.notificationOutbox.claimDue({ limit: 50, leaseMs: 60_000, groupWindowMs: 60_000 })));
    }
    expect(taken).toHaveLength(1);
    expect(taken[0]!.events).toHaveLength(1);
    const log = (await n.listDeliveries({ channelId: channel.id })).items;
    expect(log).toHaveLength(2);
    const group = log.find((d) => d.status === "pending" && d.attempts === 0)!;
    expect(group.eventIds).toHaveLength(499);
    expect(group.nextAttemptAtEpochMs).toBeGreaterThanOrEqual(taken[0]!.delivery.createdAtEpochMs + 60_000 - 1);
    expect(group.nextAttemptAtEpochMs).toBeLessThanOrEqual(taken[0]!.delivery.createdAtEpochMs + 60_000 + 1);
    // Due at the window's end; not before.
    await pool.query(
      "UPDATE notification_deliveries SET next_attempt_at = now() - interval '1 ms' WHERE tenant = $1 AND id = $2",
      [tenant, group.id],
    );
    const due = await db.notificationOutbox.claimDue({ limit: 50, leaseMs: 60_000, groupWindowMs: 60_000 });
    expect(due.map((d) => [d.delivery.id, d.events.length])).toEqual([[group.id, 499]]);
  });

  it("a group carries at most MAX_GROUP_EVENTS events: a bigger burst makes more groups for the same slot", async () => {
    await drain();
    const tenant = "o-huge";
    const n = db.notifications(tenant);
    const { channel } = await n.createChannel({ kind: "webhook", name: "h", url: "https://h.example/h" });
    await pool.query(
      `INSERT INTO notification_events (tenant, id, kind, subject, occurred_at)
       SELECT $1, 'nev_' || md5(i::text), 'human_queue', jsonb_build_object('key', i::text), now() FROM generate_series(1, 2500) i`,
      [tenant],
    );
    const taken = [
      ...(await db.notificationOutbox.claimDue({ limit: 50, leaseMs: 60_000, groupWindowMs: 60_000 })),
      ...(await db.notificationOutbox.claimDue({ limit: 50, leaseMs: 60_000, groupWindowMs: 60_000 })),
    ];
    expect(taken.map((t) => t.events.length)).toEqual([1]);
    const log = (await n.listDeliveries({ channelId: channel.id })).items;
    const sizes = log.map((d) => d.eventIds.length);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(MAX_GROUP_EVENTS);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(2500);
    expect(log.length).toBeLessThanOrEqual(5);
    const slots = new Set(log.filter((d) => d.attempts === 0).map((d) => d.nextAttemptAtEpochMs));
    expect(slots.size).toBe(1);
  });

  it("two replicas claiming at once never take the same delivery", async () => {
    await drain();
    const n = db.notifications("o-replicas");
    const { channel } = await n.createChannel({ kind: "webhook", name: "r", url: "https://r.example/h" });
    for (let i = 0; i < 60; i++) await n.sendTest(channel.id);
    const rounds = await Promise.all([
      db.notificationOutbox.claimDue({ limit: 40, leaseMs: 60_000, groupWindowMs: 60_000 }),
      replica.claimDue({ limit: 40, leaseMs: 60_000, groupWindowMs: 60_000 }),
      replica.claimDue({ limit: 40, leaseMs: 60_000, groupWindowMs: 60_000 }),
    ]);
    const ids = rounds.flat().map((c) => c.delivery.id);
    expect(ids).toHaveLength(60);
    expect(new Set(ids).size).toBe(60);

    // Fanning out at once: one replica fans out, every event lands in exactly one delivery of the channel.
    await pool.query(
      `INSERT INTO notification_events (tenant, id, kind, subject, occurred_at)
       SELECT 'o-replicas', 'nev_' || md5('r' || i), 'stale_pending', '{}', now() FROM generate_series(1, 300) i`,
    );
    const fanned = await Promise.all([
      db.notificationOutbox.claimDue({ limit: 40, leaseMs: 60_000, groupWindowMs: 60_000 }),
      replica.claimDue({ limit: 40, leaseMs: 60_000, groupWindowMs: 60_000 }),
      replica.claimDue({ limit: 40, leaseMs: 60_000, groupWindowMs: 60_000 }),
    ]);
    await db.notificationOutbox.claimDue({ limit: 40, leaseMs: 60_000, groupWindowMs: 60_000 });
    const { rows } = await pool.query<{ id: string }>(
      `SELECT unnest(event_ids) AS id FROM notification_deliveries WHERE tenant = 'o-replicas' AND kind = 'stale_pending'`,
    );
    expect(rows).toHaveLength(300);
    expect(new Set(rows.map((r) => r.id)).size).toBe(300);
    expect(fanned.flat().filter((c) => c.delivery.kind === "stale_pending")).toHaveLength(1);
  });

  it("a lease that passes lets another worker take the delivery; results: retry later, give up", async () => {
    await drain();
    const n = db.notifications("o-lease");
    const { channel } = await n.createChannel({ kind: "webhook", name: "l", url: "https://l.example/h" });
    const test = await n.sendTest(channel.id);
    const first = await db.notificationOutbox.claimDue({ limit: 5, leaseMs: 400, groupWindowMs: 60_000 });
    expect(first.map((c) => c.delivery.id)).toEqual([test!.deliveryId]);
    expect(await replica.claimDue({ limit: 5, leaseMs: 400, groupWindowMs: 60_000 })).toEqual([]);
    await sleep(600);
    const second = await replica.claimDue({ limit: 5, leaseMs: 60_000, groupWindowMs: 60_000 });
    expect(second.map((c) => [c.delivery.id, c.delivery.attempts])).toEqual([[test!.deliveryId, 2]]);

    const retryAt = (await db.clockEpochMs()) + 500;
    await replica.complete(test!.deliveryId, { delivered: false, error: "HTTP 503", retryAtEpochMs: retryAt });
    const [pending] = (await n.listDeliveries()).items;
    expect(pending).toMatchObject({ status: "pending", lastError: "HTTP 503", nextAttemptAtEpochMs: retryAt });
    expect(await db.notificationOutbox.claimDue({ limit: 5, leaseMs: 60_000, groupWindowMs: 60_000 })).toEqual([]);
    await sleep(700);
    const third = await db.notificationOutbox.claimDue({ limit: 5, leaseMs: 60_000, groupWindowMs: 60_000 });
    expect(third.map((c) => c.delivery.attempts)).toEqual([3]);
    await db.notificationOutbox.complete(test!.deliveryId, {
      delivered: false,
      error: "HTTP 410",
      retryAtEpochMs: null,
    });
    const [failed] = (await n.listDeliveries()).items;
    expect(failed).toMatchObject({ status: "failed", lastError: "HTTP 410", nextAttemptAtEpochMs: null, attempts: 3 });
    // A late success of an earlier attempt changes nothing once the delivery is closed.
    await db.notificationOutbox.complete(test!.deliveryId, { delivered: true });
    expect((await n.listDeliveries()).items[0]).toMatchObject({ status: "failed" });
  });

  it("a disabled channel gets no new events and its pending deliveries wait until it is enabled", async () => {
    await drain();
    const tenant = "o-disabled";
    const n = db.notifications(tenant);
    const { channel } = await n.createChannel({ kind: "webhook", name: "d", url: "https://d.example/h" });
    const store = db.intents(tenant);
    const r1 = await claim(store, newRecord());
    await store.update(r1.key, r1.version, toQueue, [], Date.now());
    await n.updateChannel(channel.id, { enabled: false });
    // Fanned out while disabled: nothing for it; the record queued before is fanned now too — to no one.
    expect(await db.notificationOutbox.claimDue({ limit: 5, leaseMs: 60_000, groupWindowMs: 60_000 })).toEqual([]);
    expect(await deliveries(pool, tenant)).toEqual([]);
    // A test goes to a disabled channel (the admin asked for it).
    await n.sendTest(channel.id);
    expect(await db.notificationOutbox.claimDue({ limit: 5, leaseMs: 60_000, groupWindowMs: 60_000 })).toHaveLength(1);
  });

  it("purge deletes closed deliveries and fanned-out events past the cut, keeping what a pending delivery carries", async () => {
    await drain();
    const tenant = "o-purge";
    const n = db.notifications(tenant);
    const { channel } = await n.createChannel({ kind: "webhook", name: "p", url: "https://p.example/h" });
    const done = await n.sendTest(channel.id);
    const [taken] = await db.notificationOutbox.claimDue({ limit: 5, leaseMs: 60_000, groupWindowMs: 60_000 });
    await db.notificationOutbox.complete(taken!.delivery.id, { delivered: true });
    const waiting = await n.sendTest(channel.id);
    await pool.query(
      "UPDATE notification_deliveries SET created_at = created_at - interval '2 days' WHERE tenant = $1",
      [tenant],
    );
    await pool.query("UPDATE notification_events SET occurred_at = occurred_at - interval '2 days' WHERE tenant = $1", [
      tenant,
    ]);
    expect(await db.notificationOutbox.purge({ olderThanMs: 3 * 86_400_000 })).toEqual({ deliveries: 0, events: 0 });
    const purged = await db.notificationOutbox.purge({ olderThanMs: 86_400_000 });
    expect(purged.deliveries).toBeGreaterThanOrEqual(1);
    const log = (await n.listDeliveries()).items;
    expect(log.map((d) => d.id)).toEqual([waiting!.deliveryId]);
    const events = (await outboxEvents(pool, tenant)).map((e) => e.id);
    expect(events).toEqual([waiting!.event.id]);
    expect(events).not.toContain(done!.event.id);
    await expect(db.notificationOutbox.purge({ olderThanMs: 0 })).rejects.toThrow(/^olderThanMs: /);
  });

  it("raiseConditions: stale PENDING and a tool's UNKNOWN share, one event when each starts, again after it ended", async () => {
    const tenant = "o-cond";
    const store = db.intents(tenant);
    const options = { unknownShareThreshold: 0.05, minCalls: 20, windowMs: 600_000 };
    const stale = await claim(store, newRecord({ leaseUntilEpochMs: Date.now() - 60_000 }));
    await pool.query(
      `INSERT INTO intent_rollups (tenant, tool, bucket_ms, bucket_start, calls, unknown, found, absent_resent,
         human_confirmed_effect, human_confirmed_no_effect, human_resent, open, other, latency_samples, latency_hist)
       VALUES ($1, 'flaky_tool', 60000, date_trunc('minute', now()), 100, 10, 0, 0, 0, 0, 0, 10, 0, 0, '{}'),
              ($1, 'rare_tool', 60000, date_trunc('minute', now()), 5, 5, 0, 0, 0, 0, 0, 5, 0, 0, '{}'),
              ($1, 'fine_tool', 60000, date_trunc('minute', now()), 100, 1, 0, 0, 0, 0, 0, 1, 0, 0, '{}')`,
      [tenant],
    );
    const raised = (await db.notificationOutbox.raiseConditions(options)).filter((e) => e.tenant === tenant);
    expect(raised.map((e) => e.kind).sort()).toEqual(["stale_pending", "unknown_share"]);
    expect(raised.find((e) => e.kind === "stale_pending")!.subject).toMatchObject({ count: 1 });
    expect(raised.find((e) => e.kind === "unknown_share")!.subject).toMatchObject({
      tool: "flaky_tool",
      calls: 100,
      unknown: 10,
      share: 0.1,
    });
    // While they last: nothing new, also from two replicas at once.
    const again = await Promise.all([db.notificationOutbox.raiseConditions(options), replica.raiseConditions(options)]);
    expect(again.flat().filter((e) => e.tenant === tenant)).toEqual([]);
    expect((await outboxEvents(pool, tenant)).map((e) => e.id).sort()).toEqual(raised.map((e) => e.id).sort());

    // Both end (the record settles, the share falls), then start again: new events.
    await store.update(stale.key, stale.version, { status: "SUCCEEDED" }, [], Date.now());
    await pool.query("UPDATE intent_rollups SET unknown = 0 WHERE tenant = $1 AND tool = 'flaky_tool'", [tenant]);
    expect((await db.notificationOutbox.raiseConditions(options)).filter((e) => e.tenant === tenant)).toEqual([]);
    const { rows } = await pool.query(
      "SELECT count(*)::int AS n FROM notification_conditions WHERE tenant = $1 AND active",
      [tenant],
    );
    expect(rows[0].n).toBe(0);
    await claim(store, newRecord({ leaseUntilEpochMs: Date.now() - 1000 }));
    await pool.query("UPDATE intent_rollups SET unknown = 50 WHERE tenant = $1 AND tool = 'flaky_tool'", [tenant]);
    const restarted = (await db.notificationOutbox.raiseConditions(options)).filter((e) => e.tenant === tenant);
    expect(restarted.map((e) => e.kind).sort()).toEqual(["stale_pending", "unknown_share"]);
    expect(restarted.map((e) => e.id).some((id) => raised.some((r) => r.id === id))).toBe(false);
    await expect(db.notificationOutbox.raiseConditions({ ...options, unknownShareThreshold: 2 })).rejects.toThrow(
      /^unknownShareThreshold: /,
    );
  });
});
