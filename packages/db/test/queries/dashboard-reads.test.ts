/**
 * Issue 14: every dashboard read, on ~100 k records filled by SQL (30 tools, 30 days, two tenants),
 * against a plain query over the raw tables — after a rollup refresh, with older records changed
 * since (dirty minutes), after the next refresh, and after archiving. Rollups must be right, not
 * just fast.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fillIntentLog } from "../../src/bench/dashboard-fill.ts";
import { PrismaOperatorStore } from "../../src/operator-store.ts";
import { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import {
  archiveIntents,
  getIntent,
  getRun,
  HIST_RELATIVE_ERROR,
  type IntentFilters,
  listIntents,
  listStale,
  refreshIntentRollups,
  statsOverview,
} from "../../src/queries/index.ts";
import { type CountRow, countsSql, sliceSegments } from "../../src/queries/stats-overview-sql.ts";
import { createTestDatabase, type TestDatabase } from "../../src/test-database.ts";
import {
  loadPlainFacts,
  nearestRank,
  type PlainFact,
  plainCompensations,
  plainCounts,
  plainDurations,
  plainKeys,
} from "./dashboard-reads-plain.ts";

const RECORDS = 100_000;
const TENANTS = ["acme", "default"];
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
let db: TestDatabase;
let store: PrismaIntentStore;
let client: pg.Client;
let now: number;
/** The plain facts of every record, loaded after the changes (refreshes and archiving do not change them). */
let facts: PlainFact[];

const refreshAll = async () => {
  for (let i = 0; i < 100; i++)
    if ((await refreshIntentRollups(store.prisma, { maxRangeMs: 3 * DAY })).caughtUp) return;
};
const count = async (sql: string) => Number(Object.values((await client.query(sql)).rows[0] as object)[0]);

beforeAll(async () => {
  db = await createTestDatabase();
  now = Date.now();
  await fillIntentLog(db.url, { records: RECORDS, tenants: TENANTS, endEpochMs: now - 5 * 60_000, chunk: RECORDS });
  store = new PrismaIntentStore({ databaseUrl: db.url, poolSize: 4 });
  client = new pg.Client({ connectionString: db.url });
  await client.connect();
  // Compensations' own records (step `compensate:<key>`, 1 s after the compensated record) for four
  // in five compensated records: succeeded, failed, still in flight (PENDING), waiting for a person;
  // the fifth names a record that does not exist.
  await client.query(`INSERT INTO intent_records (tenant, key, run_id, step_id, tool, args, identity, status,
      attempt, lease_until_at, recheck_at, needs_human, resolution, created_at, updated_at)
    SELECT tenant, compensation->>'key', run_id, 'compensate:' || key, 'undo', '{}', '{}',
      (CASE n % 5 WHEN 1 THEN 'SUCCEEDED' WHEN 2 THEN 'FAILED_NO_EFFECT' WHEN 3 THEN 'PENDING' ELSE 'UNKNOWN' END)::"IntentStatus", 1,
      created_at + interval '31 seconds', created_at + interval '31 seconds', n % 5 = 4, NULL::"Resolution",
      created_at + interval '1 second', created_at + interval '2 seconds'
    FROM (SELECT *, row_number() OVER (ORDER BY created_at, key) AS n FROM intent_records WHERE compensation ? 'key') r
    WHERE n % 5 <> 0`);
  await refreshAll();
  // Changes to old records after the refresh: the dirty queue must keep the overview exact.
  // Compensations: settled failed and succeeded, settled by a person, and one that was missing.
  for (const [set, which] of [
    ["status = 'FAILED_NO_EFFECT'", "status = 'PENDING' ORDER BY created_at LIMIT 3"],
    ["status = 'SUCCEEDED'", "status = 'PENDING' ORDER BY created_at DESC LIMIT 2"],
    ["status = 'SUCCEEDED', needs_human = false, resolution = 'human_confirmed_effect'", "needs_human LIMIT 2"],
  ]) {
    await client.query(`UPDATE intent_records SET ${set}, version = version + 1
      WHERE key IN (SELECT key FROM intent_records WHERE step_id LIKE 'compensate:%' AND ${which})`);
  }
  await client.query(`INSERT INTO intent_records (tenant, key, run_id, step_id, tool, args, identity, status,
      attempt, lease_until_at, recheck_at, created_at, updated_at)
    SELECT tenant, compensation->>'key', run_id, 'compensate:' || key, 'undo', '{}', '{}', 'SUCCEEDED', 1,
      now(), now(), now(), now()
    FROM intent_records r WHERE compensation ? 'key' AND NOT EXISTS (
      SELECT 1 FROM intent_records c WHERE c.tenant = r.tenant AND c.key = r.compensation->>'key')
    ORDER BY created_at DESC LIMIT 2`);
  await client.query(`UPDATE intent_records SET status = 'SUCCEEDED', resolution = 'human_confirmed_effect',
    needs_human = false, version = version + 1
    WHERE key IN (SELECT key FROM intent_records WHERE tenant = 'default' AND needs_human
      AND created_at < now() - interval '10 days' ORDER BY created_at LIMIT 3)`);
  await client.query(`UPDATE intent_records SET status = 'UNKNOWN', version = version + 1
    WHERE key IN (SELECT key FROM intent_records WHERE tenant = 'acme' AND status = 'SUCCEEDED'
      AND created_at < now() - interval '2 hours' ORDER BY created_at DESC LIMIT 4)`);
  await client.query(`INSERT INTO intent_records (tenant, key, run_id, step_id, tool, args, identity, status, attempt,
      lease_until_at, recheck_at, created_at, updated_at)
    VALUES ('default', md5('late'), 'run-late', 'step-0', 'tool_05', '{}', '{}', 'FAILED_NO_EFFECT', 1,
      now(), now(), now() - interval '3 days', now())`);
  facts = await loadPlainFacts(client);
}, 120_000);

afterAll(async () => {
  await client?.end();
  await store?.close();
  await db?.drop();
});

/** The overview against the plain query: every tool's counts per slice, previous period, latency, stale. */
async function expectOverviewExact(windowMs: number, tenant: string | undefined, to = now) {
  const from = to - windowMs;
  const tenants = tenant ? [tenant] : TENANTS;
  const o = await statsOverview(store.prisma, { fromEpochMs: from, toEpochMs: to, staleNowEpochMs: now }, { tenant });
  const plain = plainCounts(facts, tenants, { fromEpochMs: from, toEpochMs: to, buckets: 20 });
  const tools = [...new Set(plain.map((p) => p.tool))].sort();
  expect(o.tools.map((t) => t.tool).filter((t) => tools.includes(t))).toEqual(tools);
  let total = 0;
  for (const t of o.tools) {
    const mine = plain.filter((p) => p.tool === t.tool);
    const inWindow = mine.filter((p) => p.slice >= 0);
    const sum = (f: (p: (typeof mine)[number]) => number, rows = inWindow) => rows.reduce((a, p) => a + f(p), 0);
    expect({ tool: t.tool, calls: t.calls, unknown: t.unknownCount }).toEqual({
      tool: t.tool,
      calls: sum((p) => p.calls),
      unknown: sum((p) => p.unknown),
    });
    for (const [category, n] of Object.entries(t.resolutions)) {
      expect([t.tool, category, n]).toEqual([t.tool, category, sum((p) => p.categories[category] ?? 0)]);
    }
    const prev = mine.filter((p) => p.slice < 0);
    expect([t.previous.calls, t.previous.unknownCount]).toEqual([
      sum((p) => p.calls, prev),
      sum((p) => p.unknown, prev),
    ]);
    t.sparkline.forEach((point, i) => {
      const slice = inWindow.filter((p) => p.slice === i);
      expect([t.tool, i, point.calls, point.unknownCount]).toEqual([
        t.tool,
        i,
        sum((p) => p.calls, slice),
        sum((p) => p.unknown, slice),
      ]);
    });
    total += t.calls;
  }
  expect(o.totals.calls).toBe(total);
  // Latency: exact sample counts; percentiles within the histogram's bound.
  const durations = plainDurations(facts, tenants, from, to);
  for (const t of o.tools) {
    const d = durations.get(t.tool) ?? [];
    expect([t.tool, t.latency.samples]).toEqual([t.tool, d.length]);
    if (d.length === 0) continue;
    for (const [q, got] of [
      [0.5, t.latency.p50Ms],
      [0.95, t.latency.p95Ms],
      [0.99, t.latency.p99Ms],
    ] as const) {
      const want = nearestRank(d, q);
      expect(Math.abs(got! - want) / want).toBeLessThanOrEqual(HIST_RELATIVE_ERROR + 1e-9);
    }
  }
  // Stale PENDING (whatever the window) and compensations.
  const stale = await client.query<{ n: number; oldest: Date }>(
    `SELECT count(*)::int AS n, min(lease_until_at) AS oldest FROM intent_records
     WHERE tenant = ANY($1) AND status = 'PENDING' AND lease_until_at < $2`,
    [tenants, new Date(now)],
  );
  expect(o.totals.stalePendingCount).toBe(stale.rows[0]!.n);
  expect(o.totals.oldestStalePendingAgeMs).toBe(now - stale.rows[0]!.oldest.getTime());
  const comp = await plainCompensations(client, tenants, from, to);
  for (const t of o.tools) {
    const want = comp.get(t.tool) ?? { run: 0, failed: 0 };
    expect([t.tool, t.compensationsRun, t.compensationsFailed]).toEqual([t.tool, want.run, want.failed]);
  }
  const totalOf = (k: "run" | "failed") => [...comp.values()].reduce((a, c) => a + c[k], 0);
  expect([o.totals.compensationsRun, o.totals.compensationsFailed]).toEqual([totalOf("run"), totalOf("failed")]);
  return o;
}

const WINDOWS: [number, string | undefined][] = [
  [HOUR, "default"],
  [DAY, undefined],
  [7 * DAY, "default"],
]; // 30 days (all tenants): in the first test

describe("dashboard reads on 100 k records against plain queries (issue 14)", () => {
  it("the fill is realistic and the rollups were used: rollup rows, dirty minutes, non-trivial figures", async () => {
    expect(await count("SELECT count(*) FROM intent_rollups WHERE bucket_ms = 86400000")).toBeGreaterThan(30);
    expect(
      await count("SELECT count(DISTINCT (tenant, tool, minute)) FROM intent_rollup_dirty"),
    ).toBeGreaterThanOrEqual(7);
    const o = await expectOverviewExact(30 * DAY, undefined);
    expect(o.totals.calls).toBeGreaterThan(0.99 * RECORDS);
    expect(o.totals.unknownCount).toBeGreaterThan(1000);
    expect(o.totals.resolutions.open).toBeGreaterThan(200);
    expect(o.totals.resolutions.found).toBeGreaterThan(300);
    expect(o.totals.stalePendingCount).toBeGreaterThan(100);
    expect(o.totals.compensationsRun).toBeGreaterThan(30);
    expect(o.totals.compensationsFailed).toBeGreaterThan(5);
    expect(o.totals.compensationsFailed).toBeLessThan(o.totals.compensationsRun - 5);
  });

  for (const [windowMs, tenant] of WINDOWS) {
    it(`overview ${windowMs / HOUR} h, tenant ${tenant ?? "(all)"}: exact counts with dirty minutes pending`, async () => {
      await expectOverviewExact(windowMs, tenant);
    });
  }

  it("after the next refresh the dirty queue is empty and the overview still exact", async () => {
    await refreshAll();
    expect(await count("SELECT count(*) FROM intent_rollup_dirty")).toBe(0);
    await expectOverviewExact(7 * DAY, "acme");
    await expectOverviewExact(30 * DAY, undefined);
  });

  const FILTERS: IntentFilters[] = [
    {},
    { status: "PENDING" },
    { status: "FAILED_NO_EFFECT" },
    { status: "UNKNOWN", tool: "tool_03" },
    { tool: "tool_07" },
    { needsHuman: true },
    { resolution: "found" },
    { resolution: "human" },
    { stepId: "step-2" },
  ];
  const conditionOf = (f: IntentFilters, values: unknown[]) => {
    const parts: string[] = [];
    const add = (sql: string, v: unknown) => {
      values.push(v);
      parts.push(sql.replace("?", `$${values.length}`));
    };
    if (f.status) add(`status = ?::"IntentStatus"`, f.status);
    if (f.tool) add("tool = ?", f.tool);
    if (f.needsHuman !== undefined) add("needs_human = ?", f.needsHuman);
    if (f.resolution === "human") parts.push("resolution::text LIKE 'human\\_%'");
    else if (f.resolution) add(`resolution = ?::"Resolution"`, f.resolution);
    if (f.stepId) add("step_id = ?", f.stepId);
    return parts;
  };
  for (const tenant of ["default", undefined]) {
    it(`intents.list, tenant ${tenant ?? "(all)"}: first pages and a deep keyset page per filter equal the plain sort`, async () => {
      for (const filters of FILTERS) {
        const values: unknown[] = [tenant ? [tenant] : TENANTS];
        const condition = ["tenant = ANY($1)", ...conditionOf(filters, values)].join(" AND ");
        const want = await plainKeys(client, condition, values, 3_200);
        let page = await listIntents(store.prisma, { filters, limit: 100 }, { tenant });
        expect(page.items.map((i) => i.key)).toEqual(want.slice(0, 100).map((w) => w.key));
        page = await listIntents(
          store.prisma,
          { filters, limit: 100, cursor: page.nextCursor ?? "x" },
          { tenant },
        ).catch(() => ({ items: [], nextCursor: null }));
        expect(page.items.map((i) => i.key)).toEqual(want.slice(100, 200).map((w) => w.key));
        if (want.length < 3_200) continue;
        const at = want[2_999]!;
        const cursor = Buffer.from(JSON.stringify([at.createdAtEpochMs, at.key])).toString("base64url");
        page = await listIntents(store.prisma, { filters, limit: 200, cursor }, { tenant });
        expect(page.items.map((i) => i.key)).toEqual(want.slice(3_000, 3_200).map((w) => w.key));
      }
    });
  }

  it("stale and queue lists equal the plain queries", async () => {
    const stale = await listStale(store.prisma, { nowEpochMs: now, limit: 500 }, { tenant: "default" });
    const plainStale = await client.query<{ key: string; n: string }>(
      `SELECT key, count(*) OVER ()::text AS n FROM intent_records WHERE tenant = 'default' AND status = 'PENDING'
       AND lease_until_at < $1 ORDER BY lease_until_at, key LIMIT 500`,
      [new Date(now)],
    );
    expect(stale.items.map((i) => i.key)).toEqual(plainStale.rows.map((r) => r.key));
    expect(stale.total).toBe(Number(plainStale.rows[0]!.n));
    const queue = await new PrismaOperatorStore(store.prisma, "default").listNeedsHuman({
      tenant: "default",
      limit: 50,
    });
    const plainQueue = await client.query<{ key: string }>(
      "SELECT key FROM intent_records WHERE tenant = 'default' AND needs_human ORDER BY created_at, key LIMIT 50",
    );
    expect(queue.records.map((r) => r.key)).toEqual(plainQueue.rows.map((r) => r.key));
    expect(queue.records.length).toBe(50);
  });

  it("retention: archived records are found by key and run, and the overview counts them", async () => {
    const olderThan = now - 25 * DAY;
    let moved = 0;
    for (;;) {
      const r = await archiveIntents(store.prisma, { olderThanEpochMs: olderThan, batch: 20_000 });
      moved += r.moved;
      if (!r.more) break;
    }
    await client.query("ANALYZE");
    expect(moved).toBeGreaterThan(0.15 * RECORDS);
    // A late change in the minutes of archived compensated records whose compensations are archived too:
    // those minutes are counted again from their records, which must find the compensations there.
    const touched = await client.query(`INSERT INTO intent_rollup_dirty (tenant, tool, minute)
      SELECT r.tenant, r.tool, date_trunc('minute', r.created_at, 'UTC') FROM intent_records_archive r
      WHERE r.compensation ? 'key' AND EXISTS (SELECT 1 FROM intent_records_archive c
        WHERE c.tenant = r.tenant AND c.key = r.compensation->>'key')`);
    expect(touched.rowCount).toBeGreaterThan(3);
    expect(
      await count(`SELECT count(*) FROM intent_records WHERE created_at < to_timestamp(${olderThan / 1000})
      AND status IN ('SUCCEEDED', 'FAILED_NO_EFFECT') AND NOT needs_human`),
    ).toBe(0);
    const { rows } = await client.query<{ key: string; run_id: string; tenant: string }>(
      "SELECT key, run_id, tenant FROM intent_records_archive ORDER BY created_at LIMIT 1",
    );
    const detail = await getIntent(store.prisma, rows[0]!.key, { tenant: rows[0]!.tenant });
    expect(detail?.record.key).toBe(rows[0]!.key);
    expect(detail?.events.length).toBeGreaterThanOrEqual(2);
    expect((await getRun(store.prisma, rows[0]!.run_id, { tenant: rows[0]!.tenant }))?.records.length).toBeGreaterThan(
      0,
    );
    await expectOverviewExact(30 * DAY, undefined);
    await refreshAll();
    await expectOverviewExact(30 * DAY, "default");
  }, 60_000);
  it("the rollups' cut inside a minute: its minute row holds the records before the cut, the rest is read raw", async () => {
    // 10 records a second over the last 90 s (and a compensated one), then a refresh: its cut (now − 20 s)
    // falls inside a minute.
    await client.query(`INSERT INTO intent_records (tenant, key, run_id, step_id, tool, args, identity, status,
        attempt, lease_until_at, recheck_at, compensation, created_at, updated_at)
      SELECT 'default', md5('tail:' || g), 'run-tail', 'step-' || g, 'tool_01', '{}', '{}',
        (CASE WHEN g % 7 = 0 THEN 'UNKNOWN' ELSE 'SUCCEEDED' END)::"IntentStatus", 1, now() + interval '1 hour',
        now() + interval '1 hour',
        CASE WHEN g % 50 = 0 THEN '{"key": "none"}'::jsonb END,
        now() - g * interval '100 milliseconds', now()
      FROM generate_series(1, 900) AS g`);
    await refreshAll();
    const cutMs = await count("SELECT extract(epoch FROM refreshed_to) * 1000 - 20000 FROM intent_rollup_state");
    expect(cutMs % 60_000).not.toBe(0);
    const partial = await count(`SELECT calls FROM intent_rollups WHERE tenant = 'default' AND tool = 'tool_01'
      AND bucket_ms = 60000 AND bucket_start = to_timestamp(${Math.floor(cutMs / 60_000) * 60}) `);
    const before = await count(`SELECT count(*) FROM intent_records WHERE tenant = 'default' AND tool = 'tool_01'
      AND created_at >= to_timestamp(${Math.floor(cutMs / 60_000) * 60}) AND created_at < to_timestamp(${cutMs / 1000})`);
    expect(partial).toBe(before);
    // A late change in the cut's minute before the cut (the dirty queue) and a record after the cut.
    await client.query(`UPDATE intent_records SET status = 'UNKNOWN', version = version + 1
      WHERE key IN (SELECT key FROM intent_records WHERE run_id = 'run-tail' AND status = 'SUCCEEDED'
        AND created_at < to_timestamp(${cutMs / 1000}) ORDER BY created_at DESC LIMIT 2)`);
    facts = await loadPlainFacts(client);
    const to = Date.now() + 1_000;
    for (const [windowMs, tenant] of [
      [HOUR, "default"],
      [30 * 60_000, undefined],
      [7 * DAY, "default"],
    ] as const) {
      await expectOverviewExact(windowMs, tenant, to);
    }
  }, 60_000);
  it("a refresh between the overview's watermark read and its statements: the old cut's minute is read raw", async () => {
    const oldCut = await count("SELECT extract(epoch FROM refreshed_to) * 1000 - 20000 FROM intent_rollup_state");
    // Records from before the old cut up to now, then a refresh: the old cut's minute row now holds
    // records after the old cut, which segments built on the old watermark read raw as the tail.
    await client.query(`INSERT INTO intent_records (tenant, key, run_id, step_id, tool, args, identity, status,
        attempt, lease_until_at, recheck_at, created_at, updated_at)
      SELECT 'default', md5('race:' || g), 'run-race', 'step-' || g, 'tool_02', '{}', '{}', 'SUCCEEDED', 1,
        now() + interval '1 hour', now() + interval '1 hour', now() - g * interval '100 milliseconds', now()
      FROM generate_series(1, 10 * ceil(extract(epoch FROM now()) - ${oldCut / 1000})::int + 50) AS g`);
    await refreshAll();
    const to = Date.now() + 1_000;
    const from = to - HOUR;
    const segments = sliceSegments(from, to, 20, from - HOUR, oldCut);
    expect(segments.some((s) => s.cutMs === oldCut)).toBe(true);
    const rows = await store.prisma.$queryRaw<CountRow[]>(countsSql(["default"], segments));
    const got = rows.filter((r) => r.slice >= 0 && r.tool === "tool_02").reduce((a, r) => a + r.calls, 0);
    const want = await count(`SELECT count(*) FROM intent_records WHERE tenant = 'default' AND tool = 'tool_02'
      AND created_at >= to_timestamp(${from / 1000}) AND created_at < to_timestamp(${to / 1000})`);
    expect(got).toBe(want);
  }, 60_000);
});
