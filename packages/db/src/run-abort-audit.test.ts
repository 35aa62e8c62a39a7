import type { AbortReport } from "@tristate/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrismaOperatorStore } from "./operator-store.ts";
import { PrismaIntentStore } from "./prisma-intent-store.ts";
import { createTestDatabase, type TestDatabase } from "./test-database.ts";

const report = (runId: string): AbortReport => ({
  runId,
  abort: { runId, abortedAtEpochMs: 0, actorKeyId: "k1", actorName: "ops", via: "operator", reason: "test" },
  steps: [
    {
      stepId: "pay",
      tool: "issue_refund",
      key: "a".repeat(32),
      status: "SUCCEEDED",
      outcome: "compensated",
      message: "The refund was reversed.",
    },
  ],
  complete: true,
  undone: 1,
  inFlight: 0,
  needsHuman: 0,
  summary: `Run ${runId} aborted: 1 effect reversed.`,
});

describe("operators' run aborts in audit_entries (PostgreSQL)", () => {
  let db: TestDatabase;
  let store: PrismaIntentStore;
  let ops: PrismaOperatorStore;
  let acme: PrismaOperatorStore;
  const audit = (runId: string, operatorActionId: string, note = "cancelled") => ({
    operatorActionId,
    actorKeyId: "key_1",
    actorName: "ana",
    nowEpochMs: Date.now(),
    runId,
    note,
    report: report(runId),
  });

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new PrismaIntentStore({ databaseUrl: db.url });
    ops = new PrismaOperatorStore(store.prisma);
    acme = new PrismaOperatorStore(store.prisma, "acme");
  });
  afterAll(async () => {
    await store?.close();
    await db?.drop();
  });

  it("writes one row per operatorActionId; a repeat is replayed; an id of another run is taken", async () => {
    const first = await ops.recordRunAbort(audit("run-1", "action-0001"));
    expect(first).toMatchObject({
      kind: "recorded",
      entry: {
        tenant: "default",
        action: "abort_run",
        key: "run:run-1",
        tool: "",
        runId: "run-1",
        note: "cancelled",
        actorName: "ana",
        actorKeyId: "key_1",
        report: { summary: "Run run-1 aborted: 1 effect reversed.", complete: true, needsHuman: 0 },
      },
    });
    // Envelopes and messages are not kept: the step's identity and outcome are.
    expect(first.kind === "recorded" && first.entry.report.steps).toStrictEqual([
      { stepId: "pay", tool: "issue_refund", key: "a".repeat(32), status: "SUCCEEDED", outcome: "compensated" },
    ]);
    const again = await ops.recordRunAbort(audit("run-1", "action-0001", "double click"));
    expect(again.kind).toBe("replayed");
    expect(again.kind !== "id_taken" && again.entry.note).toBe("cancelled");
    expect(await ops.recordRunAbort(audit("run-2", "action-0001"))).toMatchObject({
      kind: "id_taken",
      action: "abort_run",
      key: "run:run-1",
    });
    // Ids are per tenant, like the record actions'.
    expect((await acme.recordRunAbort(audit("run-1", "action-0001"))).kind).toBe("recorded");
    expect(await store.prisma.auditEntry.count()).toBe(2);
  });

  it("listAudit returns run aborts as their own kind, filters them by action and tenant", async () => {
    const page = await ops.listAudit({ tenant: "default", action: "abort_run" });
    expect(page.entries.map((e) => [e.action, e.key])).toEqual([["abort_run", "run:run-1"]]);
    expect(page.entries[0]).toHaveProperty("report");
    expect((await ops.listAudit({ tenant: "acme" })).entries.map((e) => e.tenant)).toEqual(["acme"]);
    expect((await ops.listAudit({ action: "compensate" })).entries).toEqual([]);
    await expect(ops.listAudit({ action: "nope" as never })).rejects.toThrow(RangeError);
  });

  it("the record actions' look-ups never meet a run abort: latestAudit by record key finds none", async () => {
    expect(await ops.latestAudit("a".repeat(32))).toBeNull();
    expect((await ops.findAudit("action-0001"))?.action).toBe("abort_run");
  });
});
