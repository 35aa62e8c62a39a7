import { type FakeRemote, startFakeRemote } from "@tristate/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { getIntent, getRun, listStale } from "../../src/queries/index.ts";
import { createTestDatabase, type TestDatabase } from "../../src/test-database.ts";
import { type Seeded, seedDataset } from "./seed.ts";

let db: TestDatabase;
let remote: FakeRemote;
let store: PrismaIntentStore;
let seeded: Seeded;

beforeAll(async () => {
  db = await createTestDatabase();
  remote = await startFakeRemote();
  store = new PrismaIntentStore({ databaseUrl: db.url, poolSize: 4 });
  seeded = await seedDataset(store, remote);
}, 120_000);
afterAll(async () => {
  await store?.close();
  await remote?.close();
  await db?.drop();
});

describe("getIntent (real PostgreSQL)", () => {
  it("an absent→resent record with its timeline oldest first: created, sent, UNKNOWN, probes, resend, SUCCEEDED", async () => {
    const key = seeded.keys.absentResent[0]!;
    const detail = (await getIntent(store.prisma, key))!;
    expect(detail.record).toMatchObject({
      key,
      status: "SUCCEEDED",
      resolution: "absent_resent",
      attempt: 2,
      hasResult: true,
      runId: "run-seed",
    });
    expect(detail.record.result).toMatchObject({ clientRef: key, state: "succeeded" });
    const types = detail.events.map((e) => e.type);
    expect(types[0]).toBe("created");
    expect(types).toEqual([
      "created",
      "sent",
      "outcome",
      "probe",
      "probe",
      "probe",
      "probe",
      "resend",
      "sent",
      "outcome",
    ]);
    expect(detail.events[2]!.data).toMatchObject({ outcome: "UNKNOWN" });
    expect(detail.events.at(-1)!.data).toMatchObject({ outcome: "SUCCEEDED" });
    const ids = detail.events.map((e) => BigInt(e.id));
    expect(ids).toEqual([...ids].sort((a, b) => (a < b ? -1 : 1)));
    expect(detail.events.every((e) => typeof e.id === "string" && typeof e.atEpochMs === "number")).toBe(true);
  });

  it("tells no result (SQL NULL) from a null result; null when the key is absent", async () => {
    const pending = (await getIntent(store.prisma, seeded.keys.freshPending))!;
    expect(pending.record).toMatchObject({ status: "PENDING", hasResult: false, result: null });
    const nullResult = (await getIntent(store.prisma, seeded.keys.previous[1]!))!;
    expect(nullResult.record).toMatchObject({ status: "SUCCEEDED", hasResult: true, result: null });
    expect(await getIntent(store.prisma, "0".repeat(32))).toBeNull();
    await expect(getIntent(store.prisma, "")).rejects.toMatchObject({ field: "key" });
  });

  it("the human actions appear in the timeline; the redactor hook applies", async () => {
    const detail = (await getIntent(store.prisma, seeded.keys.humanConfirmedEffect, {
      redact: () => ({ redacted: true }),
    }))!;
    expect(detail.record).toMatchObject({ resolution: "human_confirmed_effect", args: { redacted: true } });
    expect(detail.events.map((e) => e.type)).toEqual(["created", "sent", "outcome", "needs_human", "human_action"]);
  });
});

describe("listStale (real PostgreSQL)", () => {
  it("PENDING records past their deadline, oldest deadline first, with their age past it", async () => {
    const stale = await listStale(store.prisma, { nowEpochMs: seeded.staleNow, limit: 10 });
    expect(stale.total).toBe(2);
    expect(stale.items.map((i) => [i.key, i.agePastDeadlineMs])).toEqual([
      [seeded.keys.stale[0], 60_100],
      [seeded.keys.stale[1], 30_100],
    ]);
    expect(stale.items[0]).toMatchObject({ status: "PENDING", tool: "issue_refund", runId: "run-stale" });
    const one = await listStale(store.prisma, { nowEpochMs: seeded.staleNow, limit: 1 });
    expect(one).toMatchObject({ total: 2, items: [{ key: seeded.keys.stale[0] }] });
    // An hour and more later the fresh PENDING record is stale too.
    const later = await listStale(store.prisma, { nowEpochMs: seeded.seedStart + 3_600_001 });
    expect(later.items.map((i) => i.key)).toEqual([...seeded.keys.stale, seeded.keys.freshPending]);
    expect(later.items[2]!.agePastDeadlineMs).toBe(1);
    await expect(listStale(store.prisma, { nowEpochMs: seeded.staleNow, limit: 0 })).rejects.toMatchObject({
      field: "limit",
    });
  });
});

describe("getRun (real PostgreSQL)", () => {
  it("a run's records in creation order; null for an unknown run", async () => {
    const run = (await getRun(store.prisma, "run-seed"))!;
    expect(run.truncated).toBe(false);
    expect(run.records).toHaveLength(6 + 3 + 2 + 2 + 1 + 1 + 3);
    expect(run.records.map((r) => r.stepId)).toEqual([...run.records.map((r) => r.stepId)].sort());
    expect(run.records[0]).toMatchObject({ stepId: "step-001", status: "SUCCEEDED" });
    expect(await getRun(store.prisma, "no-such-run")).toBeNull();
    expect(run.plan).toBeNull();
  });

  it("a run with only a declared plan (no record yet) opens: no records, its plan (issue 14: was null → 404)", async () => {
    const steps = [
      { stepId: "a", tool: "issue_refund" },
      { stepId: "b", tool: "slow_export" },
    ];
    await store.forTenant("acme").savePlan("run-plan-only", steps, 1_700_000_000_000);
    expect(await getRun(store.prisma, "run-plan-only", { tenant: "acme" })).toStrictEqual({
      runId: "run-plan-only",
      records: [],
      truncated: false,
      plan: { steps, declaredAtEpochMs: 1_700_000_000_000 },
      abort: null,
    });
    expect((await getRun(store.prisma, "run-plan-only"))?.plan?.steps).toEqual(steps);
    // Another tenant does not see it.
    expect(await getRun(store.prisma, "run-plan-only", { tenant: "default" })).toBeNull();
  });
});
