/**
 * The outbox's fencing and channel look-up (issue 23 §3), on a real PostgreSQL test database with two
 * outboxes over two pools (two replicas): a worker whose lease ran out and whose delivery another
 * worker claimed has its late result ignored (it can neither reschedule nor close the delivery the
 * other holds); `channelTarget` reads a channel's URL and secret for any replica's sweeper, and a
 * deleted or another tenant's channel reads as null.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OpenDatabase } from "../open-database.ts";
import { PgNotificationOutbox } from "./outbox.ts";
import { openTestFacade } from "./test-support.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("notification outbox fencing (real PostgreSQL, two replicas)", () => {
  let facade: Awaited<ReturnType<typeof openTestFacade>>;
  let db: OpenDatabase;
  let replicaPool: pg.Pool;
  let replica: PgNotificationOutbox;
  beforeAll(async () => {
    facade = await openTestFacade();
    db = facade.db;
    replicaPool = new pg.Pool({ connectionString: db.url, max: 2 });
    replica = new PgNotificationOutbox(replicaPool);
  });
  afterAll(async () => {
    await replicaPool?.end();
    await facade?.close();
  });

  it("a stale worker's late result (retry or delivered) is ignored once another worker claimed the delivery", async () => {
    const n = db.notifications("fence");
    const { channel } = await n.createChannel({ kind: "webhook", name: "f", url: "https://f.example/h" });
    const test = await n.sendTest(channel.id);
    const [stale] = await db.notificationOutbox.claimDue({ limit: 5, leaseMs: 300, groupWindowMs: 60_000 });
    expect(stale?.delivery.id).toBe(test!.deliveryId);
    await sleep(500);
    const [holder] = await replica.claimDue({ limit: 5, leaseMs: 60_000, groupWindowMs: 60_000 });
    expect(holder?.delivery).toMatchObject({ id: test!.deliveryId, attempts: 2 });

    // The first worker's late failure would push the delivery an hour away while the holder sends it.
    const far = (await db.clockEpochMs()) + 3_600_000;
    const late = await db.notificationOutbox.complete(
      stale!.delivery.id,
      { delivered: false, error: "late", retryAtEpochMs: far },
      { attempt: stale!.delivery.attempts },
    );
    expect(late).toBe(false);
    const [still] = (await n.listDeliveries()).items;
    expect(still).toMatchObject({ status: "pending", attempts: 2, lastError: null });
    // Its lease is the holder's still: nobody else takes it.
    expect(await db.notificationOutbox.claimDue({ limit: 5, leaseMs: 60_000, groupWindowMs: 60_000 })).toEqual([]);
    // A late "delivered" of the stale attempt does not close it either.
    expect(
      await db.notificationOutbox.complete(
        stale!.delivery.id,
        { delivered: true },
        { attempt: stale!.delivery.attempts },
      ),
    ).toBe(false);
    expect((await n.listDeliveries()).items[0]).toMatchObject({ status: "pending" });

    // The holder's result counts.
    expect(
      await replica.complete(
        holder!.delivery.id,
        { delivered: false, error: "HTTP 503", retryAtEpochMs: (await db.clockEpochMs()) + 200 },
        { attempt: holder!.delivery.attempts },
      ),
    ).toBe(true);
    expect((await n.listDeliveries()).items[0]).toMatchObject({ status: "pending", lastError: "HTTP 503" });
    await sleep(300);
    const [third] = await db.notificationOutbox.claimDue({ limit: 5, leaseMs: 60_000, groupWindowMs: 60_000 });
    expect(
      await db.notificationOutbox.complete(
        third!.delivery.id,
        { delivered: true },
        { attempt: third!.delivery.attempts },
      ),
    ).toBe(true);
    expect((await n.listDeliveries()).items[0]).toMatchObject({ status: "delivered", attempts: 3 });
    await expect(
      db.notificationOutbox.complete(third!.delivery.id, { delivered: true }, { attempt: 0 }),
    ).rejects.toThrow(/fence\.attempt/);
  });

  it("channelTarget: the URL and secret of this tenant's channel from any replica; null when deleted or another tenant's", async () => {
    const n = db.notifications("target");
    const { channel, secret } = await n.createChannel({ kind: "webhook", name: "t", url: "https://t.example/h" });
    expect(await replica.channelTarget("target", channel.id)).toStrictEqual({
      kind: "webhook",
      url: "https://t.example/h",
      secret,
      to: null,
      enabled: true,
    });
    const mail = await n.createChannel({ kind: "email", name: "m", to: ["ops@t.example"] });
    expect(await replica.channelTarget("target", mail.channel.id)).toMatchObject({
      kind: "email",
      url: null,
      secret: null,
      to: ["ops@t.example"],
    });
    expect(await replica.channelTarget("someone-else", channel.id)).toBeNull();
    await n.updateChannel(channel.id, { enabled: false });
    expect(await replica.channelTarget("target", channel.id)).toMatchObject({ enabled: false });
    expect(await n.deleteChannel(channel.id)).toBe(true);
    expect(await replica.channelTarget("target", channel.id)).toBeNull();
  });
});
