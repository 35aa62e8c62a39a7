import type { NewIntentRecord, RanCompensation } from "@tristate/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordFromSnapshot } from "./operator-store.ts";
import { PrismaIntentStore } from "./prisma-intent-store.ts";
import { getIntent } from "./queries/get-intent.ts";
import { listIntents } from "./queries/list-intents.ts";
import { createTestDatabase, type TestDatabase } from "./test-database.ts";

describe("the stored compensation is parsed on read (issue 19 §1)", () => {
  let db: TestDatabase;
  let store: PrismaIntentStore;
  let n = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new PrismaIntentStore({ databaseUrl: db.url });
  });
  afterAll(async () => {
    await store?.close();
    await db?.drop();
  });

  function newRecord(): NewIntentRecord {
    const now = Date.now();
    return {
      key: (++n).toString(16).padStart(32, "c"),
      runId: "run-comp",
      stepId: `s${n}`,
      tool: "book_hotel",
      args: { hotel_id: "H-1" },
      identity: { hotel_id: "H-1" },
      attempt: 1,
      leaseUntilEpochMs: now + 60_000,
      compensation: { tool: "cancel_hotel", kind: "compensation", args: null },
      createdAtEpochMs: now,
      traceId: null,
    };
  }

  it("a run compensation round-trips as written, through the port and the read queries", async () => {
    const record = newRecord();
    const claimed = await store.claim(record, [], Date.now());
    if (!claimed.claimed) throw new Error("not claimed");
    const ran: RanCompensation = {
      tool: "cancel_hotel",
      kind: "compensation",
      args: { booking_ref: "HB-1" },
      key: "d".repeat(32),
      status: "UNKNOWN",
      needsHuman: true,
      atEpochMs: Date.now(),
    };
    await store.update(record.key, claimed.record.version, { compensation: ran }, [], Date.now());
    expect((await store.get(record.key))?.compensation).toEqual(ran);
    expect((await getIntent(store.prisma, record.key))?.record.compensation).toEqual(ran);
    const page = await listIntents(store.prisma, { filters: { key: record.key } });
    expect(page.items.map((r) => r.compensation)).toEqual([ran]);
  });

  it("a malformed stored compensation fails loudly, naming the record's key and the field", async () => {
    const record = newRecord();
    await store.claim(record, [], Date.now());
    await store.prisma.$executeRawUnsafe(
      `UPDATE intent_records SET compensation = '{"tool": "cancel_hotel", "kind": "refund", "args": null}' WHERE key = $1`,
      record.key,
    );
    const fault = new RegExp(`intent record ${record.key}: the stored compensation is malformed: kind: `);
    await expect(store.get(record.key)).rejects.toThrow(fault);
    await expect(store.listByRun(record.runId)).rejects.toThrow(fault);
    await expect(getIntent(store.prisma, record.key)).rejects.toThrow(fault);
    await expect(listIntents(store.prisma, { filters: { key: record.key } })).rejects.toThrow(fault);
  });

  it("an audit snapshot's compensation is parsed too; a snapshot from before tenants reads as `default`", () => {
    const { tenant: _, ...old } = newRecord();
    const snapshot = { ...old, status: "UNKNOWN", version: 2, result: null };
    expect(recordFromSnapshot(snapshot)).toMatchObject({ tenant: "default", sentKey: null, settlesAtEpochMs: null });
    expect(recordFromSnapshot(snapshot).compensation).toEqual({
      tool: "cancel_hotel",
      kind: "compensation",
      args: null,
    });
    expect(() => recordFromSnapshot({ ...snapshot, compensation: { tool: "cancel_hotel" } })).toThrow(
      new RegExp(`intent record ${snapshot.key}: the stored compensation is malformed: kind: `),
    );
  });
});
