import type { IntentEvent, IntentPatch } from "@tristate/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { listRuns, type RunSummary } from "../../src/queries/index.ts";
import { createTestDatabase, type TestDatabase } from "../../src/test-database.ts";
import { claimDirect } from "./seed.ts";

let db: TestDatabase;
let store: PrismaIntentStore;
let acme: PrismaIntentStore;
/** A fixed "now": every seeded time is relative to it. */
const NOW = Date.UTC(2026, 10, 30, 12, 0, 0);
const MIN = 60_000;
const ok: IntentPatch = { status: "SUCCEEDED", result: null };

let n = 0;
/** A record of `runId` created `ago` ms before NOW (then patched). */
async function rec(
  s: PrismaIntentStore,
  runId: string,
  tool: string,
  ago: number,
  patch?: IntentPatch,
  opts: { stepId?: string; events?: (key: string) => IntentEvent[]; updatedAt?: number } = {},
) {
  n++;
  return claimDirect(s, {
    tool,
    runId,
    stepId: opts.stepId ?? `s${n}`,
    orderId: `o-${n}`,
    createdAt: NOW - ago,
    deadline: NOW - ago + 30_000,
    ...(patch ? { patch } : {}),
    ...(opts.events ? { events: opts.events } : {}),
    ...(opts.updatedAt !== undefined ? { updatedAt: opts.updatedAt } : {}),
  });
}

const COLUMNS = `tenant, key, run_id, step_id, tool, args, identity, status, attempt, lease_until_at, recheck_at, result, error,
  compensation, resolution, needs_human, reconcile_sweeps, version, created_at, updated_at, finished_at, trace_id,
  sent_key, settles_at`;
/** Moves records (of these runs, or these keys) of tenant default with their timelines to the archive tables. */
async function archive(runIds: string[], keys: string[]) {
  const which = "tenant = 'default' AND (run_id = ANY($1) OR key = ANY($2))";
  await store.pool.query(
    `INSERT INTO intent_records_archive (${COLUMNS}) SELECT ${COLUMNS} FROM intent_records WHERE ${which}`,
    [runIds, keys],
  );
  await store.pool.query(
    `INSERT INTO intent_events_archive (id, tenant, key, type, at, data)
     SELECT id, tenant, key, type, at, data FROM intent_events
     WHERE tenant = 'default' AND key IN (SELECT key FROM intent_records WHERE ${which})`,
    [runIds, keys],
  );
  await store.pool.query(`DELETE FROM intent_records WHERE ${which}`, [runIds, keys]);
}

beforeAll(async () => {
  db = await createTestDatabase();
  store = new PrismaIntentStore({ databaseUrl: db.url, poolSize: 4 });
  acme = store.forTenant("acme");
  // completed: two tools, 3 min long.
  await rec(store, "run-done", "refund", 10 * MIN, { ...ok, finishedAtEpochMs: NOW - 10 * MIN + 100 });
  await rec(
    store,
    "run-done",
    "email",
    8 * MIN,
    { ...ok, finishedAtEpochMs: NOW - 7 * MIN },
    { updatedAt: NOW - 7 * MIN },
  );
  // open: a call in flight.
  await rec(store, "run-open", "refund", 9 * MIN);
  // needs attention: one still UNKNOWN, one in the human queue; one UNKNOWN settled by a late answer.
  await rec(store, "run-attn", "refund", 7 * MIN, { status: "UNKNOWN", error: { code: "READ_TIMEOUT", message: "t" } });
  await rec(store, "run-attn", "refund", 6 * MIN + 1, {
    status: "UNKNOWN",
    needsHuman: true,
    error: { code: "READ_TIMEOUT", message: "t" },
  });
  await rec(store, "run-attn", "email", 6 * MIN, ok, {
    events: (key) => [{ key, type: "outcome", atEpochMs: NOW - 6 * MIN, data: { outcome: "UNKNOWN" } }],
  });
  // aborted: a compensation step.
  await rec(store, "run-aborted", "refund", 5 * MIN, ok);
  await rec(store, "run-aborted", "reverse_refund", 4 * MIN, ok, { stepId: "compensate:abc" });
  // planned, one step done, one not yet called: open.
  await rec(store, "run-planned", "refund", 3 * MIN, ok, { stepId: "p1" });
  await store.savePlan(
    "run-planned",
    [
      { stepId: "p1", tool: "refund" },
      { stepId: "p2", tool: "email" },
    ],
    NOW,
  );
  // A declared plan and no call yet (issue 14): open, listed, started when declared.
  await store.savePlan("run-plan-only", [{ stepId: "q1", tool: "refund" }], NOW - 2 * MIN);
  // started before the default window (25 h ago), active inside it: not listed.
  await rec(store, "run-old", "refund", 25 * 60 * MIN, ok);
  await rec(store, "run-old", "refund", 2 * MIN, ok);
  // another tenant, same run id as a default one.
  await rec(acme, "run-done", "refund", 1 * MIN, ok);
  // Retention moved records to the archive: a whole aborted run (its timeline too), and the first
  // record of a run whose second is live.
  const u = await rec(store, "run-archived", "refund", 12 * MIN, ok, {
    events: (key) => [{ key, type: "outcome", atEpochMs: NOW - 12 * MIN, data: { outcome: "UNKNOWN" } }],
  });
  await rec(store, "run-archived", "reverse_refund", 11 * MIN, ok, { stepId: `compensate:${u.key}` });
  const half = await rec(store, "run-half", "email", 13 * MIN, ok);
  await rec(store, "run-half", "refund", 1 * MIN, ok);
  await archive(["run-archived"], [half.key]);
  // 12 runs in the same millisecond (ties broken by tenant, run id).
  for (let i = 0; i < 12; i++) await rec(store, `run-tie-${String(i).padStart(2, "0")}`, "batch", 30 * MIN, ok);
}, 120_000);
afterAll(async () => {
  await store?.close();
  await db?.drop();
});

const list = (input: Parameters<typeof listRuns>[1], tenant?: string) =>
  listRuns(store.prisma, input, { nowEpochMs: NOW, ...(tenant !== undefined ? { tenant } : {}) });

async function readAll(input: Parameters<typeof listRuns>[1], tenant?: string): Promise<RunSummary[]> {
  const items: RunSummary[] = [];
  let cursor: string | undefined;
  do {
    const page = await list({ ...input, ...(cursor ? { cursor } : {}) }, tenant);
    items.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return items;
}

const byId = (items: RunSummary[], runId: string, tenant = "default") =>
  items.find((r) => r.runId === runId && r.tenant === tenant);

describe("listRuns (real PostgreSQL)", () => {
  it("summarises each run: status, start, duration, tools, steps, UNKNOWNs, human queue", async () => {
    const { items, fromEpochMs, toEpochMs } = await list({ limit: 200 }, "default");
    expect(toEpochMs - fromEpochMs).toBe(24 * 60 * MIN);
    expect(byId(items, "run-done")).toStrictEqual({
      runId: "run-done",
      tenant: "default",
      status: "completed",
      startedAtEpochMs: NOW - 10 * MIN,
      lastActivityEpochMs: NOW - 7 * MIN,
      durationMs: 3 * MIN,
      tools: ["email", "refund"],
      steps: 2,
      unresolvedUnknownCount: 0,
      unknownCount: 0,
      needsHumanCount: 0,
      abortedAtEpochMs: null,
    });
    expect(byId(items, "run-open")?.status).toBe("open");
    // Three ever UNKNOWN, of which two are still unresolved (one settled by a late answer).
    expect(byId(items, "run-attn")).toMatchObject({
      status: "needs_attention",
      unresolvedUnknownCount: 2,
      unknownCount: 3,
      needsHumanCount: 1,
    });
    expect(byId(items, "run-aborted")).toMatchObject({ status: "aborted", steps: 2, unknownCount: 0 });
    expect(byId(items, "run-planned")?.status).toBe("open");
    expect(byId(items, "run-old")).toBeUndefined();
    // Archived records count like live ones (start, steps, tools, compensation, ever UNKNOWN).
    expect(byId(items, "run-archived")).toMatchObject({
      status: "aborted",
      startedAtEpochMs: NOW - 12 * MIN,
      steps: 2,
      tools: ["refund", "reverse_refund"],
      unknownCount: 1,
    });
    expect(byId(items, "run-half")).toMatchObject({
      startedAtEpochMs: NOW - 13 * MIN,
      steps: 2,
      tools: ["email", "refund"],
    });
    expect(items.every((r) => r.tenant === "default")).toBe(true);
  });

  it("filters by status and tool; the tool filter keeps the run's other tools", async () => {
    const statuses = async (status: "open" | "completed" | "aborted" | "needs_attention") =>
      (await readAll({ status }, "default")).map((r) => r.runId).sort();
    expect(await statuses("open")).toEqual(["run-open", "run-plan-only", "run-planned"]);
    expect(await statuses("aborted")).toEqual(["run-aborted", "run-archived"]);
    expect(await statuses("needs_attention")).toEqual(["run-attn"]);
    expect(await statuses("completed")).toContain("run-done");
    const email = await readAll({ tool: "email" }, "default");
    // run-half's email step is archived: still a step of that tool.
    expect(email.map((r) => r.runId).sort()).toEqual(["run-attn", "run-done", "run-half"]);
    expect(byId(email, "run-done")?.tools).toEqual(["email", "refund"]);
    expect(await readAll({ tool: "email", status: "completed" }, "default")).toHaveLength(2);
  });

  it("the window: runs that started in it (a run older than it is not listed even when active in it)", async () => {
    const recent = await readAll({ fromEpochMs: NOW - 5 * MIN - 1, toEpochMs: NOW }, "default");
    expect(recent.map((r) => r.runId).sort()).toEqual(["run-aborted", "run-plan-only", "run-planned"]);
    // A run whose first (archived) record is before the window started before it.
    const late = await readAll({ fromEpochMs: NOW - 2 * MIN, toEpochMs: NOW }, "default");
    expect(late.map((r) => r.runId)).not.toContain("run-half");
    const all = await readAll({ fromEpochMs: NOW - 26 * 60 * MIN, toEpochMs: NOW + MIN }, "default");
    expect(byId(all, "run-old")).toMatchObject({ steps: 2, startedAtEpochMs: NOW - 25 * 60 * MIN });
  });

  it("tenants: a tenant sees its own runs only; without a tenant (admins) every tenant's, same run ids apart", async () => {
    expect((await readAll({}, "acme")).map((r) => [r.tenant, r.runId])).toEqual([["acme", "run-done"]]);
    const all = await readAll({});
    expect(byId(all, "run-done", "acme")).toMatchObject({ steps: 1 });
    expect(byId(all, "run-done", "default")).toMatchObject({ steps: 2 });
    expect(byId(all, "run-archived", "default")).toMatchObject({ steps: 2, status: "aborted" });
    expect(await readAll({}, "nobody")).toEqual([]);
  });

  it("keyset pages: every run once, newest start first, ties by tenant and run id; inserts between pages shift nothing", async () => {
    const window = { fromEpochMs: NOW - 60 * MIN, toEpochMs: NOW + 60 * MIN };
    const whole = await readAll({ ...window, limit: 200 });
    const paged: RunSummary[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await list({ ...window, limit: 4, ...(cursor ? { cursor } : {}) });
      paged.push(...page.items);
      cursor = page.nextCursor ?? undefined;
      pages++;
      // Writes while paging (inside the window): a new run, new records of listed runs.
      await rec(store, `run-late-${pages}`, "refund", -pages * MIN, ok);
      await rec(store, "run-done", "late", -pages * MIN, ok);
      await rec(store, "run-tie-05", "batch", -pages * MIN, ok);
    } while (cursor);
    const ids = (rs: RunSummary[]) => rs.map((r) => `${r.tenant}/${r.runId}`);
    expect(ids(paged)).toEqual(ids(whole));
    expect(new Set(ids(paged)).size).toBe(paged.length);
    const ties = paged.filter((r) => r.runId.startsWith("run-tie-")).map((r) => r.runId);
    expect(ties).toEqual([...ties].sort().reverse());
    expect(ties).toHaveLength(12);
    expect(pages).toBe(Math.ceil(whole.length / 4));
  });

  it("a run with only a declared plan is listed, open, started when declared, with no steps", async () => {
    const { items } = await list({ limit: 200 }, "default");
    expect(byId(items, "run-plan-only")).toStrictEqual({
      runId: "run-plan-only",
      tenant: "default",
      status: "open",
      startedAtEpochMs: NOW - 2 * MIN,
      lastActivityEpochMs: NOW - 2 * MIN,
      durationMs: 0,
      tools: [],
      steps: 0,
      unresolvedUnknownCount: 0,
      unknownCount: 0,
      needsHumanCount: 0,
      abortedAtEpochMs: null,
    });
    // Not in another tenant, not before its declaration, not under a tool filter (it has no record).
    expect(byId(await readAll({}, "acme"), "run-plan-only", "default")).toBeUndefined();
    expect(byId(await readAll({ fromEpochMs: NOW - MIN, toEpochMs: NOW }, "default"), "run-plan-only")).toBeUndefined();
    expect(byId(await readAll({ tool: "refund" }, "default"), "run-plan-only")).toBeUndefined();
  });

  it("the tool filter is a case-insensitive substring; LIKE wildcards are plain characters", async () => {
    const ids = async (tool: string) => (await readAll({ tool }, "default")).map((r) => r.runId).sort();
    expect(await ids("EMAI")).toEqual(["run-attn", "run-done", "run-half"]);
    // `_` only matches an underscore (reverse_refund), `%` matches nothing here.
    expect(await ids("_")).toEqual(["run-aborted", "run-archived"]);
    expect(await ids("%")).toEqual([]);
    expect(await ids("fund")).toContain("run-aborted");
  });

  it("the window error names the field the caller gave (issue 14: fromEpochMs 0 alone blamed toEpochMs)", async () => {
    await expect(list({ fromEpochMs: 0 })).rejects.toMatchObject({
      field: "fromEpochMs",
      message: expect.stringMatching(/^fromEpochMs: must be at most 31 days before toEpochMs \(default: now\)/),
    });
    await expect(list({ fromEpochMs: NOW + MIN })).rejects.toMatchObject({ field: "fromEpochMs" });
    await expect(list({ fromEpochMs: 0, toEpochMs: NOW })).rejects.toMatchObject({
      field: "toEpochMs",
      message: "toEpochMs: must be at most 31 days after fromEpochMs (the widest window)",
    });
    // Only an end: the start defaults to 24 h before it, never an error.
    await expect(list({ toEpochMs: NOW - 40 * 24 * 60 * MIN })).resolves.toMatchObject({ items: [] });
  });

  it("bad input is refused naming the field", async () => {
    await expect(list({ cursor: "nonsense" })).rejects.toMatchObject({ field: "cursor" });
    await expect(list({ fromEpochMs: NOW, toEpochMs: NOW })).rejects.toMatchObject({ field: "toEpochMs" });
    await expect(list({ fromEpochMs: 0, toEpochMs: NOW })).rejects.toMatchObject({ field: "toEpochMs" });
    await expect(list({ limit: 201 })).rejects.toMatchObject({ field: "limit" });
    await expect(list({ status: "weird" as never })).rejects.toMatchObject({ field: "status" });
  });
});
