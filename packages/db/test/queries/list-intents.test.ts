import { type FakeRemote, startFakeRemote } from "@tristate/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { type IntentSummary, listIntents } from "../../src/queries/index.ts";
import { createTestDatabase, type TestDatabase } from "../../src/test-database.ts";
import { claimDirect, type Seeded, seedDataset } from "./seed.ts";

let db: TestDatabase;
let remote: FakeRemote;
let store: PrismaIntentStore;
let seeded: Seeded;
/** Keys of 7 records created in the same millisecond (ties broken by key). */
const ties: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  remote = await startFakeRemote();
  store = new PrismaIntentStore({ databaseUrl: db.url, poolSize: 4 });
  seeded = await seedDataset(store, remote);
  for (let i = 0; i < 7; i++) {
    const r = await claimDirect(store, {
      tool: "batch_tie",
      runId: "run-tie",
      stepId: `tie-${i}`,
      orderId: `t-${i}`,
      createdAt: seeded.seedStart - 1_000,
      deadline: seeded.seedStart + 3_600_000,
      patch: { status: "SUCCEEDED", result: null },
    });
    ties.push(r.key);
  }
}, 120_000);
afterAll(async () => {
  await store?.close();
  await remote?.close();
  await db?.drop();
});

/** Reads every page of a listing. */
async function readAll(input: Parameters<typeof listIntents>[1]): Promise<{ items: IntentSummary[]; pages: number }> {
  const items: IntentSummary[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await listIntents(store.prisma, { ...input, ...(cursor ? { cursor } : {}) });
    pages++;
    items.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return { items, pages };
}

const newestFirst = (a: IntentSummary, b: IntentSummary) =>
  b.createdAtEpochMs - a.createdAtEpochMs || (a.key < b.key ? 1 : a.key > b.key ? -1 : 0);

describe("listIntents (real PostgreSQL)", () => {
  it("pages of 7 cover every record once, newest first, ties broken by key (no duplicates, no gaps)", async () => {
    const { items, pages } = await readAll({ limit: 7 });
    const all = [...seeded.allKeys, ...ties];
    expect(items).toHaveLength(all.length);
    expect(new Set(items.map((i) => i.key)).size).toBe(all.length);
    expect(new Set(items.map((i) => i.key))).toEqual(new Set(all));
    expect(items).toEqual([...items].sort(newestFirst));
    expect(pages).toBe(Math.ceil(all.length / 7));
    const tieOrder = items.filter((i) => i.tool === "batch_tie").map((i) => i.key);
    expect(tieOrder).toEqual([...ties].sort().reverse());
  });

  it("records written between pages neither shift nor repeat the next page", async () => {
    const first = await listIntents(store.prisma, { limit: 5 });
    await claimDirect(store, {
      tool: "batch_tie",
      runId: "run-late",
      stepId: "late",
      orderId: "l-1",
      createdAt: Date.now() + 10_000,
      deadline: Date.now() + 3_600_000,
      patch: { status: "SUCCEEDED", result: null },
    });
    const second = await listIntents(store.prisma, { limit: 5, cursor: first.nextCursor! });
    const fresh = await listIntents(store.prisma, { limit: 11 });
    expect(fresh.items[0]!.runId).toBe("run-late");
    expect(second.items.map((i) => i.key)).toEqual(fresh.items.slice(6, 11).map((i) => i.key));
  });

  it("a record summary carries times in epoch ms and the args; the redactor hook rewrites args", async () => {
    const key = seeded.keys.found[0]!;
    const { items } = await listIntents(store.prisma, { filters: { key } });
    expect(items).toHaveLength(1);
    const item = items[0]!;
    expect(item).toMatchObject({ key, tool: "issue_refund", status: "SUCCEEDED", resolution: "found", attempt: 1 });
    expect(item.args).toMatchObject({ currency: "EUR" });
    expect(typeof item.createdAtEpochMs).toBe("number");
    expect(item.createdAtEpochMs).toBeGreaterThanOrEqual(seeded.seedStart);
    expect(item).not.toHaveProperty("result");
    const masked = await listIntents(
      store.prisma,
      { filters: { key } },
      { redact: ({ args }) => ({ ...(args as object), order_id: "***" }) },
    );
    expect(masked.items[0]!.args).toMatchObject({ order_id: "***", currency: "EUR" });
  });

  it("filters: tool, status, resolution, needsHuman, runId, stepId, traceId, time range", async () => {
    const keysOf = async (
      filters: Parameters<typeof listIntents>[1] extends infer I
        ? I extends { filters?: infer F }
          ? F
          : never
        : never,
    ) => new Set((await readAll({ filters, limit: 200 })).items.map((i) => i.key));
    expect(await keysOf({ resolution: "found" })).toEqual(new Set(seeded.keys.found));
    expect(await keysOf({ resolution: "absent_resent", tool: "issue_refund" })).toEqual(
      new Set(seeded.keys.absentResent),
    );
    expect(await keysOf({ needsHuman: true })).toEqual(
      new Set([seeded.keys.needsHuman, seeded.keys.resentThenRefused]),
    );
    expect(await keysOf({ status: "PENDING" })).toEqual(new Set([...seeded.keys.stale, seeded.keys.freshPending]));
    expect(await keysOf({ status: "UNKNOWN", tool: "slow_export" })).toEqual(
      new Set(seeded.keys.slow.filter((_, i) => i % 5 === 0)),
    );
    expect(await keysOf({ runId: "run-prev" })).toEqual(new Set([...seeded.keys.previous, seeded.keys.beforePrevious]));
    expect(await keysOf({ runId: "run-stale", stepId: "fresh" })).toEqual(new Set([seeded.keys.freshPending]));
    expect(await keysOf({ traceId: "traceslow-03".padEnd(32, "0") })).toEqual(new Set([seeded.keys.slow[3]]));
    expect(await keysOf({ fromEpochMs: seeded.from - 20 * 60_000, toEpochMs: seeded.from })).toEqual(
      new Set(seeded.keys.previous),
    );
    expect((await keysOf({ tool: "no_such_tool" })).size).toBe(0);
  });

  it("the tool filter is a case-insensitive substring of the name; `%` and `_` are plain characters", async () => {
    const toolsOf = async (tool: string) => {
      const { items } = await readAll({ filters: { tool }, limit: 200 });
      return { keys: new Set(items.map((i) => i.key)), tools: [...new Set(items.map((i) => i.tool))].sort() };
    };
    const issue = await toolsOf("issue_refund");
    const unsafe = await toolsOf("unsafe_refund");
    const refund = await toolsOf("REFUND");
    expect(refund.tools).toEqual(["issue_refund", "unsafe_refund"]);
    expect(refund.keys).toEqual(new Set([...issue.keys, ...unsafe.keys]));
    expect((await toolsOf("_tie")).tools).toEqual(["batch_tie"]);
    expect((await toolsOf("h_t")).tools).toEqual(["batch_tie"]);
    expect((await toolsOf("h%t")).keys.size).toBe(0);
    expect((await toolsOf("batch_t_e")).keys.size).toBe(0);
  });

  it("a window that ends before it starts is refused naming filters.toEpochMs", async () => {
    await expect(
      listIntents(store.prisma, { filters: { fromEpochMs: 10_000, toEpochMs: 5_000 } }),
    ).rejects.toMatchObject({ field: "filters.toEpochMs", message: "filters.toEpochMs: must be after fromEpochMs" });
  });

  it("invalid input names the field: a forged cursor, a limit over 200, an unknown status, an unknown filter", async () => {
    await expect(listIntents(store.prisma, { cursor: "not-a-cursor" })).rejects.toMatchObject({ field: "cursor" });
    await expect(listIntents(store.prisma, { limit: 201 })).rejects.toMatchObject({ field: "limit" });
    await expect(listIntents(store.prisma, { filters: { status: "LOST" as never } })).rejects.toMatchObject({
      field: "filters.status",
    });
    await expect(listIntents(store.prisma, { filters: { colour: "red" } as never })).rejects.toMatchObject({
      field: "filters",
    });
    const page = await listIntents(store.prisma, {});
    expect(page.items).toHaveLength(50);
  });
});
