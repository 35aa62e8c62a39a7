import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createExecutor, Deadline } from "@tristate/core";
import { type FakeRemote, refundTool, startFakeRemote } from "@tristate/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OpenDatabase, openDatabase } from "../open-database.ts";
import { PrismaIntentStore } from "../prisma-intent-store.ts";
import { createTestDatabase, type TestDatabase } from "../test-database.ts";
import type { TristateDatabase } from "./ports.ts";
import { postgresDatabase } from "./postgres-database.ts";

const ARGS = { order_id: "A-1", amount: "10.00", currency: "EUR", reason: "facade" };

describe("openDatabase's facade (real PostgreSQL)", () => {
  let testDb: TestDatabase;
  let remote: FakeRemote;
  let opened: OpenDatabase;
  let db: TristateDatabase;
  let key: string;

  beforeAll(async () => {
    testDb = await createTestDatabase();
    remote = await startFakeRemote();
    opened = await openDatabase({ databaseUrl: testDb.url, poolSize: 3 });
    db = opened;
    const executor = createExecutor({ store: db.intents("acme"), tools: [refundTool(remote)] });
    const envelope = await executor.call({
      runId: "run-1",
      stepId: "step-1",
      tool: "issue_refund",
      args: ARGS,
      deadline: Deadline.after(10_000),
    });
    expect(envelope.status).toBe("SUCCEEDED");
    key = envelope.idempotency_key;
    await executor.outcomesWritten();
  });
  afterAll(async () => {
    await opened?.close();
    await remote?.close();
    await testDb?.drop();
  });

  it("intents(tenant) is the store's tenant view; the default tenant's is the store itself", async () => {
    expect(db.intents("default")).toBe(opened.store);
    const acme = db.intents("acme");
    expect(acme).toBeInstanceOf(PrismaIntentStore);
    expect(acme.tenant).toBe("acme");
    expect(await acme.get(key)).toMatchObject({ tenant: "acme", status: "SUCCEEDED" });
    expect(await db.intents("default").get(key)).toBeNull();
    expect(() => db.intents("Not A Tenant!")).toThrow(TypeError);
  });

  it("operators(tenant) is made once per tenant and confined to it", async () => {
    expect(db.operators("acme")).toBe(db.operators("acme"));
    expect(db.operators("acme").tenant).toBe("acme");
    expect((await db.operators("acme").listNeedsHuman({ tenant: "acme" })).records).toEqual([]);
    expect((await db.operators("acme").listAudit({ tenant: "acme" })).entries).toEqual([]);
  });

  it("reads(tenant) scope the dashboard queries; undefined reads every tenant", async () => {
    expect((await db.reads("acme").getIntent(key))?.record.key).toBe(key);
    expect(await db.reads("default").getIntent(key)).toBeNull();
    expect((await db.reads(undefined).getIntent(key))?.record.tenant).toBe("acme");
    expect((await db.reads(undefined).listIntents()).items.map((r) => r.key)).toEqual([key]);
    expect((await db.reads("default").listIntents()).items).toEqual([]);
    expect((await db.reads("acme").getRun("run-1"))?.records.map((r) => r.key)).toEqual([key]);
    expect((await db.reads("acme").listRuns({}, { nowEpochMs: Date.now() })).items.map((r) => r.runId)).toEqual([
      "run-1",
    ]);
    expect(await db.reads("acme").listStale({ nowEpochMs: Date.now() })).toEqual({ items: [], total: 0 });
    const now = Date.now();
    const stats = await db.reads("acme").statsOverview({
      fromEpochMs: now - 60_000,
      toEpochMs: now + 1,
      staleNowEpochMs: now,
    });
    expect(stats.tools.map((t) => t.tool)).toEqual(["issue_refund"]);
  });

  it("tenantOfKey finds the tenant holding a key, null for none", async () => {
    expect(await db.tenantOfKey(key)).toBe("acme");
    expect(await db.tenantOfKey("0".repeat(32))).toBeNull();
  });

  it("keys and sessions share the pool", async () => {
    const made = await db.keys.create({ name: "facade", role: "operator", tenant: "acme" });
    expect(await db.keys.count()).toBe(1);
    expect(await db.keys.tenants()).toEqual(["acme", "default"]);
    const limits = { ttlMs: 60_000, idleMs: 60_000 };
    const { sessionId } = await db.sessions.create(made.info.id, limits);
    expect((await db.sessions.resolve(sessionId, limits))?.id).toBe(made.info.id);
    expect(await db.keys.revoke(made.info.id)).toEqual({ revoked: true, sessionsEnded: 1 });
  });

  it("migrationStatus: every migration of the folder applied", async () => {
    const status = await db.migrationStatus();
    expect(status.expected).toBeGreaterThan(0);
    expect(status.applied).toBe(status.expected);
  });

  it("clockEpochMs is the database's; vacuum answers the tables it vacuumed", async () => {
    expect(Math.abs((await db.clockEpochMs()) - Date.now())).toBeLessThan(5_000);
    const tables = await db.vacuum();
    expect(Array.isArray(tables)).toBe(true);
    const loop = db.startVacuumLoop({ intervalMs: 60_000 });
    await loop.stop();
    const readModel = db.startReadModelLoop({ intervalMs: 60_000 });
    await readModel.stop();
  });
});

it("migrationStatus counts the migrations folder's directories", async () => {
  const testDb = await createTestDatabase();
  const dir = await mkdtemp(join(tmpdir(), "tristate-migrations-"));
  const store = new PrismaIntentStore({ databaseUrl: testDb.url, poolSize: 1 });
  try {
    for (let i = 0; i < 99; i++) await mkdir(join(dir, `m${i}`));
    const db = postgresDatabase(store, { embedded: false, close: () => store.close(), migrationsDir: dir });
    const status = await db.migrationStatus();
    expect(status.expected).toBe(99);
    expect(status.applied).toBeLessThan(99);
    await db.close();
    await db.close(); // idempotent
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
    await testDb.drop();
  }
});
