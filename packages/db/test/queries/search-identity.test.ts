import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prisma } from "../../src/generated/prisma/client.ts";
import { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { archiveIntents } from "../../src/queries/index.ts";
import {
  identitySearchForms,
  identitySearchSql,
  searchByIdentity,
  searchByIdentityInput,
} from "../../src/queries/search-identity.ts";
import { createTestDatabase, type TestDatabase } from "../../src/test-database.ts";

let db: TestDatabase;
let store: PrismaIntentStore;
let client: pg.Client;
let serial = 0;
const BASE_MS = Date.parse("2026-11-01T00:00:00Z");

/** Inserts a settled record straight into `intent_records`; returns its key. */
async function insert(spec: {
  tenant?: string;
  tool: string;
  identity: Record<string, string>;
  createdAtMs: number;
}): Promise<string> {
  const key = (serial++).toString(16).padStart(32, "0");
  const at = new Date(spec.createdAtMs);
  await client.query(
    `INSERT INTO intent_records (tenant, key, run_id, step_id, tool, args, identity, status, attempt,
       lease_until_at, created_at, updated_at, finished_at, resolution)
     VALUES ($1, $2, $3, $4, $5, $6, $7, 'SUCCEEDED', 1, $8, $8, $8, $8, NULL)`,
    [spec.tenant ?? "t1", key, `run-${key.slice(-6)}`, "s1", spec.tool, spec.identity, spec.identity, at],
  );
  return key;
}

/** Every page of a search, as keys. */
async function allPages(input: Parameters<typeof searchByIdentity>[1], tenant?: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await searchByIdentity(store.prisma, { ...input, ...(cursor ? { cursor } : {}) }, { tenant });
    keys.push(...page.items.map((i) => i.key));
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return keys;
}

beforeAll(async () => {
  db = await createTestDatabase();
  store = new PrismaIntentStore({ databaseUrl: db.url, poolSize: 2 });
  client = new pg.Client(db.url);
  await client.connect();
}, 120_000);
afterAll(async () => {
  await client?.end();
  await store?.close();
  await db?.drop();
});

describe("identitySearchForms", () => {
  it("tries the value as typed, in upper and lower case, and a decimal in every fixed-place form", () => {
    expect(identitySearchForms("a-1182")).toEqual(["a-1182", "A-1182"]);
    const forms = identitySearchForms("49.9");
    expect(forms.slice(0, 3)).toEqual(["49.9", "49.90", "49.900"]);
    expect(forms).toHaveLength(20);
    expect(identitySearchForms("1182")).toContain("1182.00");
    expect(identitySearchForms("-0")).toContain("0.00");
  });
});

describe("searchByIdentity (real PostgreSQL)", () => {
  it("finds the records whose identity holds the value, across tools, naming the matched field", async () => {
    const refund = await insert({
      tool: "issue_refund",
      identity: { order_id: "A-1182", amount: "10.00" },
      createdAtMs: BASE_MS + 1,
    });
    const ship = await insert({ tool: "ship_order", identity: { order: "A-1182" }, createdAtMs: BASE_MS + 2 });
    await insert({ tool: "issue_refund", identity: { order_id: "A-1183", amount: "10.00" }, createdAtMs: BASE_MS + 3 });
    const page = await searchByIdentity(store.prisma, { value: "  a-1182 " }, { tenant: "t1" });
    expect(page.items.map((i) => [i.key, i.tool, i.matchedFields, i.archived])).toEqual([
      [ship, "ship_order", ["order"], false],
      [refund, "issue_refund", ["order_id"], false],
    ]);
    expect(page.nextCursor).toBeNull();
    const byAmount = await searchByIdentity(store.prisma, { value: "10", tool: "REFUND" }, { tenant: "t1" });
    expect(byAmount.items).toHaveLength(2);
    expect(byAmount.items.every((i) => i.matchedFields.includes("amount"))).toBe(true);
    expect((await searchByIdentity(store.prisma, { value: "A-118" }, { tenant: "t1" })).items).toEqual([]);
  });

  it("never returns another tenant's record with the same value; an admin's unscoped read sees both", async () => {
    const mine = await insert({ tool: "pay", identity: { invoice: "INV-9" }, createdAtMs: BASE_MS + 10 });
    const theirs = await insert({
      tenant: "t2",
      tool: "pay",
      identity: { invoice: "INV-9" },
      createdAtMs: BASE_MS + 11,
    });
    expect(await allPages({ value: "INV-9" }, "t1")).toEqual([mine]);
    expect(await allPages({ value: "INV-9" }, "t2")).toEqual([theirs]);
    expect(await allPages({ value: "INV-9" }, "t3")).toEqual([]);
    expect(await allPages({ value: "INV-9" })).toEqual([theirs, mine]);
  });

  it("finds archived records too, merged by creation time and marked archived", async () => {
    const old = await insert({ tool: "pay", identity: { invoice: "INV-OLD" }, createdAtMs: BASE_MS - 86_400_000 });
    const fresh = await insert({ tool: "pay", identity: { invoice: "INV-OLD" }, createdAtMs: Date.now() });
    const moved = await archiveIntents(store.prisma, { olderThanEpochMs: BASE_MS - 1 });
    expect(moved.moved).toBe(1);
    const page = await searchByIdentity(store.prisma, { value: "INV-OLD" }, { tenant: "t1" });
    expect(page.items.map((i) => [i.key, i.archived])).toEqual([
      [fresh, false],
      [old, true],
    ]);
  });

  it("keyset pages stay stable when records are written between pages (no duplicate, no gap)", async () => {
    const originals: { key: string; at: number }[] = [];
    for (let i = 0; i < 7; i++) {
      const at = BASE_MS + 100 + (i % 3); // ties on created_at, broken by key
      originals.push({ key: await insert({ tool: "book", identity: { booking: "BK-7" }, createdAtMs: at }), at });
    }
    const newestFirst = originals.sort((a, b) => b.at - a.at || (a.key < b.key ? 1 : -1)).map((o) => o.key);
    const first = await searchByIdentity(store.prisma, { value: "BK-7", limit: 3 }, { tenant: "t1" });
    expect(first.items.map((i) => i.key)).toEqual(newestFirst.slice(0, 3));
    const newer = await insert({ tool: "book", identity: { booking: "BK-7" }, createdAtMs: BASE_MS + 500 });
    const inside = await insert({ tool: "book", identity: { booking: "BK-7" }, createdAtMs: BASE_MS + 100 });
    const rest = await allPages({ value: "BK-7", limit: 3, cursor: first.nextCursor! }, "t1");
    const seen = [...first.items.map((i) => i.key), ...rest];
    expect(seen.filter((k) => k !== inside)).toEqual(newestFirst);
    expect(seen).toContain(inside); // written behind the cursor: the later pages show it
    expect(seen).not.toContain(newer); // written before the first page's start: not repeated later
  });

  it("names the field of a bad input", async () => {
    const fieldOf = (input: unknown) =>
      searchByIdentity(store.prisma, input as never, { tenant: "t1" }).then(
        () => "accepted",
        (e: { field?: string }) => e.field,
      );
    expect(await fieldOf({ value: "   " })).toBe("value");
    expect(await fieldOf({ value: "x".repeat(201) })).toBe("value");
    expect(await fieldOf({ value: "a\u0000b" })).toBe("value");
    expect(await fieldOf({ value: "a\ud800b" })).toBe("value");
    expect(await fieldOf({ value: "x", limit: 101 })).toBe("limit");
    expect(await fieldOf({ value: "x", cursor: "nope" })).toBe("cursor");
    expect(await fieldOf({ value: "x", order: "A" })).toBe("input");
  });

  it("reads the GIN indexes of both tables among 100,000 records (EXPLAIN), live and archived found", async () => {
    await client.query(`
      INSERT INTO intent_records (tenant, key, run_id, step_id, tool, args, identity, status, attempt,
        lease_until_at, created_at, updated_at)
      SELECT CASE WHEN i % 2 = 0 THEN 't1' ELSE 't2' END, md5(i::text), 'bulk-' || i, 's', 'bulk_tool', '{}'::jsonb,
        jsonb_build_object('order_id', 'O-' || i, 'currency', 'USD'), 'SUCCEEDED', 1,
        now() - make_interval(secs => i), now() - make_interval(secs => i), now() - make_interval(secs => i)
      FROM generate_series(1, 100000) AS i`);
    // The older half to the archive (created over 50,000 s ago), so both tables are large.
    expect(
      (await archiveIntents(store.prisma, { olderThanEpochMs: Date.now() - 50_000_000, batch: 100_000 })).moved,
    ).toBeGreaterThan(49_000);
    await client.query("VACUUM ANALYZE intent_records");
    await client.query("VACUUM ANALYZE intent_records_archive");
    const input = searchByIdentityInput.parse({ value: "O-4242" });
    const sql = identitySearchSql(input, identitySearchForms(input.value), "t1");
    const plan = await store.prisma.$queryRaw<{ "QUERY PLAN": string }[]>(
      Prisma.sql`EXPLAIN (ANALYZE, BUFFERS) ${sql}`,
    );
    const text = plan.map((r) => r["QUERY PLAN"]).join("\n");
    expect(text).toContain("intent_records_identity_idx");
    expect(text).toContain("intent_records_archive_identity_idx");
    expect(text).not.toMatch(/Seq Scan on intent_records\b/);
    const started = performance.now();
    const page = await searchByIdentity(store.prisma, { value: "o-4242" }, { tenant: "t1" });
    const elapsedMs = performance.now() - started;
    expect(page.items.map((i) => [i.runId, i.archived, i.matchedFields])).toEqual([["bulk-4242", false, ["order_id"]]]);
    const archived = await searchByIdentity(store.prisma, { value: "O-90000" }, { tenant: "t1" });
    expect(archived.items.map((i) => [i.runId, i.archived])).toEqual([["bulk-90000", true]]);
    expect((await searchByIdentity(store.prisma, { value: "O-4243" }, { tenant: "t1" })).items).toEqual([]);
    // A value in every record of the tenant (50,000, half archived): one page still comes back whole.
    const commonStarted = performance.now();
    const common = await searchByIdentity(store.prisma, { value: "usd", limit: 100 }, { tenant: "t1" });
    const commonMs = performance.now() - commonStarted;
    expect(common.items).toHaveLength(100);
    expect(common.nextCursor).not.toBeNull();
    console.log(
      `identity search, 100k records: rare value ${elapsedMs.toFixed(1)} ms, value in 50k records ${commonMs.toFixed(1)} ms\n${text}`,
    );
  }, 120_000);
});
