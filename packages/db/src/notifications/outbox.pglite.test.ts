import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OpenDatabase, openDatabase } from "../open-database.ts";
import { claim, newRecord } from "./test-support.ts";

/** The same triggers, fan-out and claim on the embedded PGlite database (one session, the default install). */
describe("notifications on embedded PGlite", () => {
  let db: OpenDatabase;
  beforeAll(async () => {
    db = await openDatabase({ embedded: true, dataDir: "memory://" });
  });
  afterAll(async () => {
    await db?.close();
  });

  it("a record entering the queue is claimed for its channel; a burst is grouped", async () => {
    const n = db.notifications("default");
    const { channel, secret } = await n.createChannel({ kind: "webhook", name: "h", url: "http://127.0.0.1:9/h" });
    const store = db.intents("default");
    const records = await Promise.all(Array.from({ length: 20 }, () => claim(store, newRecord())));
    const toQueue = { status: "UNKNOWN", needsHuman: true, error: { code: "NO_PROBE", message: "x" } } as const;
    await Promise.all(records.map((r) => store.update(r.key, r.version, toQueue, [], Date.now())));
    const claimed = await db.notificationOutbox.claimDue({ limit: 10, leaseMs: 30_000, groupWindowMs: 60_000 });
    expect(claimed.map((c) => [c.channel.id, c.secret, c.events.length])).toEqual([[channel.id, secret, 1]]);
    const log = await n.listDeliveries();
    expect(log.items.map((d) => d.eventIds.length).sort((a, b) => a - b)).toEqual([1, 19]);
    await db.notificationOutbox.complete(claimed[0]!.delivery.id, { delivered: true });
    expect(await n.hasChannelFor("human_queue")).toBe(true);
  });
});
