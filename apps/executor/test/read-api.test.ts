/**
 * The operators' read API through real HTTP against the running service on the real PostgreSQL:
 * stats.overview, stats.attention, intents.list/get, stale.list, runs.get. Data: calls through the service's own
 * `calls.execute` and through a second executor (fast probes) on the same database, with faults
 * injected by a fake remote; one stale PENDING record claimed directly.
 */
import { type AnyTool, createExecutor, Deadline, type Envelope, idempotencyKey } from "@tristate/core";
import { ApiKeyStore, createTestDatabase, PrismaIntentStore, type TestDatabase } from "@tristate/db";
import { type FakeRemote, refundTool, startFakeRemote } from "@tristate/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEnv } from "../src/env.ts";
import { type RunningService, startService } from "../src/service.ts";

let db: TestDatabase;
let remote: FakeRemote;
let service: RunningService;
let seedStore: PrismaIntentStore;
const keys = { viewer: "", agent: "", operator: "" };
const seeded = { succeeded: [] as string[], found: [] as string[], absentResent: "", needsHuman: "", stale: "" };
let start = 0;

/** An HTTP answer: status and parsed JSON body (tRPC's `{result:{data}}` or `{error:{data}}`). */
// biome-ignore lint/suspicious/noExplicitAny: the tests read arbitrary JSON paths of the answers
type Reply = { status: number; json: any };

async function http(method: "GET" | "POST", path: string, input: unknown, key: string | null): Promise<Reply> {
  const query = method === "GET" && input !== undefined ? `?input=${encodeURIComponent(JSON.stringify(input))}` : "";
  const res = await fetch(`${service.url}/trpc/${path}${query}`, {
    method,
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(method === "POST" ? { "content-type": "application/json" } : {}),
    },
    ...(method === "POST" ? { body: JSON.stringify(input) } : {}),
  });
  return { status: res.status, json: await res.json() };
}
const get = (path: string, input: unknown, key: string | null = keys.viewer) => http("GET", path, input, key);

beforeAll(async () => {
  start = Date.now();
  db = await createTestDatabase();
  remote = await startFakeRemote();
  const tools = (): AnyTool[] => [
    refundTool(remote),
    refundTool(remote, { name: "unsafe_refund", kind: "unsafe", probe: undefined, probeByIdentity: undefined }),
  ];
  service = await startService(
    readEnv({ DATABASE_URL: db.url, PORT: "0", LOG_LEVEL: "silent", TRISTATE_SWEEP_INTERVAL_MS: "0" }),
    { tools: tools() },
  );
  const apiKeys = new ApiKeyStore(service.services.store.prisma);
  for (const role of ["viewer", "agent", "operator"] as const) {
    keys[role] = (await apiKeys.create({ name: `${role} key`, role })).secret;
  }

  // Three plain successes through the service's own API.
  for (let i = 0; i < 3; i++) {
    const res = await http(
      "POST",
      "calls.execute",
      {
        runId: "run-read",
        stepId: `ok-${i}`,
        tool: "issue_refund",
        args: { order_id: `R-${i}`, amount: 5 + i, currency: "EUR" },
        budgetMs: 10_000,
      },
      keys.agent,
    );
    expect(res.json.result.data.status).toBe("SUCCEEDED");
    seeded.succeeded.push(res.json.result.data.idempotency_key);
  }
  // Faults through a second executor with fast probes on the same database.
  seedStore = new PrismaIntentStore({ databaseUrl: db.url, poolSize: 2 });
  const executor = createExecutor({ store: seedStore, tools: tools(), probe: { attempts: 2, spacingMs: 5 } });
  const call = async (tool: string, stepId: string, ...faults: Parameters<FakeRemote["fault"]>): Promise<Envelope> => {
    remote.fault(...faults);
    return executor.call({
      runId: "run-read",
      stepId,
      tool,
      args: { order_id: `F-${stepId}`, amount: 20, currency: "EUR" },
      deadline: Deadline.after(10_000),
    });
  };
  for (const step of ["found-1", "found-2"]) {
    const e = await call("issue_refund", step, { answer: 500 });
    expect(e).toMatchObject({ status: "SUCCEEDED", resolution: "found" });
    seeded.found.push(e.idempotency_key);
  }
  const resent = await call("issue_refund", "resent", { commit: false, answer: 503 }, {});
  expect(resent).toMatchObject({ status: "SUCCEEDED", resolution: "absent_resent" });
  seeded.absentResent = resent.idempotency_key;
  const human = await call("unsafe_refund", "human", { answer: 500 });
  expect(human).toMatchObject({ status: "UNKNOWN", resolution: "needs_human" });
  seeded.needsHuman = human.idempotency_key;

  // An orphan: PENDING, its deadline 10 s ago.
  const identity = { order_id: "ORPHAN", amount: "1.00" };
  const key = idempotencyKey("run-orphan", "step-1", "issue_refund", identity);
  const now = Date.now();
  const claim = await seedStore.claim(
    {
      key,
      runId: "run-orphan",
      stepId: "step-1",
      tool: "issue_refund",
      args: { order_id: "orphan", amount: 1 },
      identity,
      attempt: 1,
      leaseUntilEpochMs: now - 10_000,
      compensation: null,
      createdAtEpochMs: now - 20_000,
      traceId: null,
    },
    [{ key, type: "created", atEpochMs: now - 20_000, data: {} }],
    now - 20_000,
  );
  expect(claim.claimed).toBe(true);
  seeded.stale = key;
}, 120_000);

afterAll(async () => {
  await seedStore?.close();
  await service?.close();
  await remote?.close();
  await db?.drop();
});

const window = () => ({ fromEpochMs: start - 60_000, toEpochMs: Date.now() + 60_000 });

describe("stats.overview over HTTP", () => {
  it("GET /trpc/stats.overview with a viewer key returns the right numbers per tool and in total", async () => {
    const res = await get("stats.overview", window());
    expect(res.status).toBe(200);
    const o = res.json.result.data;
    expect(o.tools.map((t: { tool: string }) => t.tool)).toEqual(["issue_refund", "unsafe_refund"]);
    const [refund, unsafe] = o.tools;
    // 3 successes + 2 found + 1 absent→resent + 1 stale orphan.
    expect(refund).toMatchObject({
      calls: 7,
      unknownCount: 3,
      stalePendingCount: 1,
      timeoutMs: 500,
      compensationsRun: 0,
      compensationsFailed: 0,
      resolutions: {
        found: 2,
        absent_resent: 1,
        human_confirmed_effect: 0,
        human_confirmed_no_effect: 0,
        human_resent: 0,
        open: 0,
        other: 0,
      },
    });
    expect(refund.unknownShare).toBeCloseTo(3 / 7, 12);
    expect(refund.oldestStalePendingAgeMs).toBeGreaterThanOrEqual(10_000);
    // Sends with a duration: 3 + 2 (UNKNOWN first sends) + 2 (UNKNOWN, resend).
    expect(refund.latency.samples).toBe(7);
    expect(refund.latency.p99Ms).toBeGreaterThanOrEqual(refund.latency.p50Ms);
    expect(unsafe).toMatchObject({ calls: 1, unknownCount: 1, unknownShare: 1, resolutions: { open: 1 } });
    expect(o.totals).toMatchObject({ calls: 8, unknownCount: 4, unknownShare: 0.5, stalePendingCount: 1 });
    expect(o.totals.sparkline).toHaveLength(20);
    expect(o.totals.sparkline.reduce((n: number, p: { calls: number }) => n + p.calls, 0)).toBe(8);
    expect(o.totals.previous).toMatchObject({ calls: 0, unknownShare: null });
  });

  it("auth: an agent key gets 403, no key 401; operators may read", async () => {
    expect((await get("stats.overview", window(), keys.agent)).status).toBe(403);
    expect((await get("stats.overview", window(), null)).status).toBe(401);
    expect((await get("stats.overview", window(), keys.operator)).status).toBe(200);
    expect((await get("intents.list", {}, keys.agent)).status).toBe(403);
    expect((await get("stale.list", undefined, keys.agent)).status).toBe(403);
  });

  it("a bad window → 400 naming the field", async () => {
    const now = Date.now();
    const reversed = await get("stats.overview", { fromEpochMs: now, toEpochMs: now });
    expect(reversed.status).toBe(400);
    expect(reversed.json.error.data.field).toBe("toEpochMs");
    const tooLong = await get("stats.overview", { fromEpochMs: now - 401 * 86_400_000, toEpochMs: now });
    expect(tooLong.status).toBe(400);
    expect(tooLong.json.error.data.field).toBe("fromEpochMs");
    const notInteger = await get("stats.overview", { fromEpochMs: "yesterday", toEpochMs: now });
    expect(notInteger.status).toBe(400);
    expect(notInteger.json.error.data.field).toBe("fromEpochMs");
    const missing = await get("stats.overview", { fromEpochMs: now });
    expect(missing.status).toBe(400);
    expect(missing.json.error.data.field).toBe("toEpochMs");
  });
});

describe("stats.attention over HTTP", () => {
  it("counts the human queue with its oldest record's age, and the stale PENDING with the oldest's age past its deadline", async () => {
    const before = Date.now();
    const res = await get("stats.attention", undefined);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const a = res.json.result.data;
    const human = (await get("intents.get", { key: seeded.needsHuman })).json.result.data.record;
    expect(a.needsHuman).toMatchObject({ count: 1, oldestCreatedAtEpochMs: human.createdAtEpochMs });
    // Its age by the database's clock: at least the time since its creation as this process saw it.
    expect(a.needsHuman.oldestAgeMs).toBeGreaterThanOrEqual(before - human.createdAtEpochMs - 1_000);
    expect(a.needsHuman.oldestAgeMs).toBeLessThanOrEqual(Date.now() - human.createdAtEpochMs + 1_000);
    expect(a.stalePending.count).toBe(1);
    expect(a.stalePending.oldestAgePastDeadlineMs).toBeGreaterThanOrEqual(10_000);
  });

  it("auth and input: an agent key gets 403, no key 401; an unknown key is refused by name", async () => {
    expect((await get("stats.attention", undefined, keys.agent)).status).toBe(403);
    expect((await get("stats.attention", undefined, null)).status).toBe(401);
    expect((await get("stats.attention", undefined, keys.operator)).status).toBe(200);
    const unknown = await get("stats.attention", { window: 1 });
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(unknown.json.error)).toContain("window");
  });
});

describe("intents, stale and runs over HTTP", () => {
  it("intents.list pages with a cursor: every record once, newest first; filters apply", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res: Reply = await get("intents.list", { limit: 3, ...(cursor ? { cursor } : {}) });
      expect(res.status).toBe(200);
      seen.push(...res.json.result.data.items.map((i: { key: string }) => i.key));
      cursor = res.json.result.data.nextCursor;
    } while (cursor);
    const all = [...seeded.succeeded, ...seeded.found, seeded.absentResent, seeded.needsHuman, seeded.stale];
    expect(seen).toHaveLength(all.length);
    expect(new Set(seen)).toEqual(new Set(all));
    const found = await get("intents.list", { filters: { resolution: "found" } });
    expect(new Set(found.json.result.data.items.map((i: { key: string }) => i.key))).toEqual(new Set(seeded.found));
    // `human`: any resolution a person chose (none here yet; the database test pages through many).
    const anyHuman = await get("intents.list", { filters: { resolution: "human" } });
    expect(anyHuman.status, JSON.stringify(anyHuman.json)).toBe(200);
    expect(anyHuman.json.result.data.items).toEqual([]);
    const badResolution = await get("intents.list", { filters: { resolution: "humans" } });
    expect(badResolution.status).toBe(400);
    expect(badResolution.json.error.data.field).toBe("filters.resolution");
    const human = await get("intents.list", { filters: { needsHuman: true, tool: "unsafe_refund" } });
    expect(human.json.result.data.items).toMatchObject([{ key: seeded.needsHuman, status: "UNKNOWN" }]);
    const forged = await get("intents.list", { cursor: "forged" });
    expect(forged.status).toBe(400);
    expect(forged.json.error.data.field).toBe("cursor");
    const badStatus = await get("intents.list", { filters: { status: "LOST" } });
    expect(badStatus.status).toBe(400);
    expect(badStatus.json.error.data.field).toBe("filters.status");
  });

  it("intents.get returns the record and its timeline; an absent key → 404", async () => {
    const res = await get("intents.get", { key: seeded.found[0] });
    expect(res.status).toBe(200);
    const { record, events } = res.json.result.data;
    expect(record).toMatchObject({ key: seeded.found[0], status: "SUCCEEDED", resolution: "found", hasResult: true });
    expect(events.map((e: { type: string }) => e.type)).toEqual(["created", "sent", "outcome", "probe", "outcome"]);
    expect(typeof events[0].id).toBe("string");
    const absent = await get("intents.get", { key: "0".repeat(32) });
    expect(absent.status).toBe(404);
    expect(absent.json.error.data.field).toBe("key");
    expect((await get("intents.get", { key: "nope" })).status).toBe(400);
  });

  it("stale.list shows the orphan with its age past the deadline; runs.get the run in order", async () => {
    const stale = await get("stale.list", { limit: 10 });
    expect(stale.status).toBe(200);
    expect(stale.json.result.data.total).toBe(1);
    expect(stale.json.result.data.items).toMatchObject([{ key: seeded.stale, status: "PENDING" }]);
    expect(stale.json.result.data.items[0].agePastDeadlineMs).toBeGreaterThanOrEqual(10_000);
    expect((await get("stale.list", undefined)).status).toBe(200);
    const run = await get("runs.get", { runId: "run-read" });
    expect(run.status).toBe(200);
    expect(run.json.result.data.records.map((r: { stepId: string }) => r.stepId)).toEqual([
      "ok-0",
      "ok-1",
      "ok-2",
      "found-1",
      "found-2",
      "resent",
      "human",
    ]);
    expect((await get("runs.get", { runId: "no-such-run" })).status).toBe(404);
  });
});
