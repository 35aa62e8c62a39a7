import type { IntentRecord, OperatorChange } from "@tristate/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrismaOperatorStore } from "./operator-store.ts";
import { PrismaIntentStore } from "./prisma-intent-store.ts";
import { createTestDatabase, type TestDatabase } from "./test-database.ts";

describe("PrismaOperatorStore on PostgreSQL: change + events + audit in one transaction", () => {
  let db: TestDatabase;
  let store: PrismaIntentStore;
  let ops: PrismaOperatorStore;
  let n = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new PrismaIntentStore({ databaseUrl: db.url });
    ops = new PrismaOperatorStore(store.prisma);
  });
  afterAll(async () => {
    await store?.close();
    await db?.drop();
  });

  async function unknownRecord(): Promise<IntentRecord> {
    const now = Date.now();
    const key = (++n).toString(16).padStart(32, "a");
    const claim = await store.claim(
      {
        key,
        runId: "run",
        stepId: `s${n}`,
        tool: "issue_refund",
        args: { order_id: "A-1", amount: "1.00" },
        identity: { order_id: "A-1", amount: "1.00" },
        attempt: 1,
        leaseUntilEpochMs: now + 1000,
        compensation: null,
        createdAtEpochMs: now,
        traceId: null,
      },
      [],
      now,
    );
    if (!claim.claimed) throw new Error("not claimed");
    const rec = await store.update(
      key,
      1,
      { status: "UNKNOWN", needsHuman: true, error: { code: "NO_PROBE", message: "x" } },
      [],
      now,
    );
    return rec!;
  }
  const change = (rec: IntentRecord, id: string, over: Partial<OperatorChange> = {}): OperatorChange => ({
    key: rec.key,
    expectedVersion: rec.version,
    patch: { status: "SUCCEEDED", resolution: "human_confirmed_effect", needsHuman: false, error: null },
    events: [{ key: rec.key, type: "human_action", atEpochMs: Date.now(), data: { operatorActionId: id } }],
    nowEpochMs: Date.now(),
    audit: { operatorActionId: id, actorKeyId: "k1", actorName: "ana", action: "confirm_effect", note: "seen" },
    ...over,
  });

  it("applies: record, event, audit row with exact before → after snapshots", async () => {
    const rec = await unknownRecord();
    const res = await ops.applyOperatorAction(change(rec, "op-apply-1"));
    expect(res.kind).toBe("applied");
    if (res.kind !== "applied") return;
    expect(res.record).toEqual(await store.get(rec.key));
    expect(res.audit.before).toEqual(rec);
    expect(res.audit.after).toEqual(res.record);
    expect(res.audit.after.result).toBeUndefined();
    expect(await ops.findAudit("op-apply-1")).toEqual(res.audit);
    expect(await ops.latestAudit(rec.key)).toEqual(res.audit);
    expect((await store.listEvents(rec.key)).map((e) => e.type)).toEqual(["human_action"]);
  });

  it("identical racing requests: one applies, the others get the winner's row; one event, one audit row", async () => {
    const rec = await unknownRecord();
    const results = await Promise.all([1, 2, 3, 4].map(() => ops.applyOperatorAction(change(rec, "op-race-1"))));
    expect(results.filter((r) => r.kind === "applied")).toHaveLength(1);
    expect(results.filter((r) => r.kind === "duplicate")).toHaveLength(3);
    const winner = results.find((r) => r.kind === "applied");
    for (const r of results)
      if (r.kind === "duplicate" && winner?.kind === "applied") expect(r.audit).toEqual(winner.audit);
    expect(await store.prisma.auditEntry.count({ where: { key: rec.key } })).toBe(1);
    expect(await store.listEvents(rec.key)).toHaveLength(1);
  });

  it("different actions on one version: one applies, the other is stale with the current record", async () => {
    const rec = await unknownRecord();
    const [a, b] = await Promise.all([
      ops.applyOperatorAction(change(rec, "op-two-a")),
      ops.applyOperatorAction(change(rec, "op-two-b", { patch: { status: "FAILED_NO_EFFECT" } })),
    ]);
    expect([a.kind, b.kind].sort()).toEqual(["applied", "stale"]);
    const stale = a.kind === "stale" ? a : b;
    if (stale.kind === "stale") expect(stale.current?.version).toBe(rec.version + 1);
  });

  it("an action id already used on another record rolls the change back and answers duplicate", async () => {
    const first = await unknownRecord();
    await ops.applyOperatorAction(change(first, "op-reused"));
    const second = await unknownRecord();
    const res = await ops.applyOperatorAction(change(second, "op-reused"));
    expect(res.kind).toBe("duplicate");
    if (res.kind === "duplicate") expect(res.audit.key).toBe(first.key);
    expect(await store.get(second.key)).toEqual(second);
    expect(await store.listEvents(second.key)).toHaveLength(0);
  });

  it("listAudit and listNeedsHuman page with cursors", async () => {
    const page = await ops.listAudit({ limit: 2 });
    expect(page.entries).toHaveLength(2);
    expect(page.entries[0]!.id).toBeGreaterThan(page.entries[1]!.id);
    const next = await ops.listAudit({ limit: 2, cursor: page.nextCursor! });
    expect(next.entries[0]!.id).toBeLessThan(page.entries[1]!.id);
    await expect(ops.listAudit({ cursor: "x" })).rejects.toThrow(RangeError);
    const a = await unknownRecord();
    const b = await unknownRecord();
    const q1 = await ops.listNeedsHuman({ limit: 1 });
    const all = await ops.listNeedsHuman();
    expect(all.records.map((r) => r.key)).toEqual(expect.arrayContaining([a.key, b.key]));
    expect(all.records.every((r) => r.needsHuman)).toBe(true);
    const q2 = await ops.listNeedsHuman({ limit: 1, cursor: q1.nextCursor! });
    expect(q2.records[0]?.key).toBe(all.records[1]?.key);
  });

  it("the tool filter of the queue and the audit log is a case-insensitive substring; % and _ are plain", async () => {
    await unknownRecord();
    const queue = async (tool: string) => (await ops.listNeedsHuman({ tool })).records.length;
    const audit = async (tool: string) => (await ops.listAudit({ tool })).entries.length;
    for (const list of [queue, audit]) {
      expect(await list("REFUND")).toBeGreaterThan(0);
      expect(await list("issue_refund")).toBe(await list("REFUND"));
      expect(await list("e_r")).toBe(await list("REFUND")); // "issue_refund" contains "e_r"
      expect(await list("s_e")).toBe(0); // as a wildcard, `_` would match "issue"
      expect(await list("%")).toBe(0);
    }
  });
});
