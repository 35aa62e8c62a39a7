/**
 * `GET /metrics` under attack (issue 23 §1), a running service over HTTP, real PostgreSQL: another
 * tenant's keys see nothing of this one (raw text, buckets included), revoked keys and near-miss
 * tokens are refused, other methods and paths do not serve; what counts as a call (a replay and a
 * refusal before sending do not — docs/metrics.md); names an agent makes up create no series; every
 * outcome of a counted tool is exported from its first call (at 0), so `increase()` sees the first
 * UNKNOWN.
 */
import { Deadline, type Envelope, type Executor } from "@tristate/core";
import { ApiKeyStore, type TristateDatabase } from "@tristate/db";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEnv } from "../src/env.ts";
import { createMetrics, type TristateMetrics } from "../src/metrics/index.ts";
import { countedExecutor } from "../src/metrics/observe.ts";
import { mcpClient } from "./mcp-support.ts";
import { reversibleRefundTools } from "./reversible-refund.ts";
import { startStack, type TestStack } from "./support.ts";

const TOKEN = "Metrics-Token-0123456789";
let stack: TestStack;
const acme = {} as Record<"agent" | "viewer" | "revoked", string>;

async function scrape(bearer: string | null, init: { method?: string; path?: string } = {}) {
  const res = await fetch(`${stack.service.url}${init.path ?? "/metrics"}`, {
    method: init.method ?? "GET",
    headers: bearer === null ? {} : { authorization: `Bearer ${bearer}` },
  });
  return { status: res.status, text: await res.text() };
}

async function execute(key: string, runId: string, stepId: string, tool: string, args: unknown) {
  const res = await stack.post("calls.execute", { runId, stepId, tool, args, budgetMs: 8000 }, key);
  return res.json?.result?.data ?? res.json;
}

/** The sample lines (not comments) of `text` that name `series`. */
const lines = (text: string, series: string) =>
  text.split("\n").filter((l) => l.startsWith(`${series}{`) || l.startsWith(`${series} `));

const refund = (order: string) => ({ order_id: order, amount: "10.00", currency: "EUR" });

beforeAll(async () => {
  stack = await startStack({
    tools: (remote) => reversibleRefundTools(remote),
    env: { TRISTATE_METRICS_TOKEN: TOKEN, TRISTATE_METRICS_REFRESH_MS: "3600000", TRISTATE_AUTH_FAILURES: "1000" },
  });
  const keys = new ApiKeyStore(stack.service.services.store.prisma);
  for (const role of ["agent", "viewer"] as const) {
    acme[role] = (await keys.create({ name: `acme ${role}`, role, tenant: "acme" })).secret;
  }
  const revoked = await keys.create({ name: "acme gone", role: "viewer", tenant: "acme" });
  await keys.revoke(revoked.info.id);
  acme.revoked = revoked.secret;
  // default: one call sent, then the same step twice more (replays); acme: one call.
  for (let i = 0; i < 3; i++) {
    expect(await execute(stack.keys.agent, "run-r", "s1", "issue_refund", refund("R-1"))).toMatchObject({
      status: "SUCCEEDED",
      replayed: i > 0,
    });
  }
  expect(await execute(acme.agent, "run-a", "s1", "issue_refund", refund("A-1"))).toMatchObject({
    status: "SUCCEEDED",
  });
  await stack.service.services.metrics.refresh();
}, 90_000);

afterAll(async () => {
  await stack?.close();
});

describe("GET /metrics under attack", () => {
  it("another tenant's viewer sees no line of this tenant's, buckets and timeouts included", async () => {
    const res = await scrape(acme.viewer);
    expect(res.status).toBe(200);
    expect(res.text).toContain('tenant="acme"');
    expect(res.text).not.toContain('tenant="default"');
    for (const line of res.text.split("\n").filter((l) => l.startsWith("tristate_"))) {
      expect(line, line).toMatch(/tenant="acme"/);
    }
    expect(lines(res.text, "tristate_call_duration_seconds_bucket").length).toBeGreaterThan(0);
  });

  it("refuses a revoked key, the token in another case or length, and serves only GET/HEAD at /metrics", async () => {
    expect((await scrape(acme.revoked)).status).toBe(401);
    expect((await scrape(TOKEN.toLowerCase())).status).toBe(401);
    expect((await scrape(TOKEN.slice(0, -1))).status).toBe(401);
    expect((await scrape(`${TOKEN} `)).status).toBe(200); // trailing space of the header only
    expect((await scrape(TOKEN, { method: "POST" })).status).toBe(405);
    const head = await scrape(TOKEN, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.text).toBe("");
    expect((await scrape(TOKEN, { path: "/metrics?tenant=default" })).status).toBe(200);
    // A query string cannot widen a viewer's scope.
    expect((await scrape(acme.viewer, { path: "/metrics?tenant=default" })).text).not.toContain('tenant="default"');
    for (const path of ["/metrics/", "/Metrics", "//metrics"]) {
      const res = await scrape(TOKEN, { path });
      expect(res.status, path).toBe(404);
      expect(res.text).not.toContain("tristate_calls_total");
    }
  });

  it("a replay of a step is not a new call: counted once, its duration observed once", async () => {
    const text = (await scrape(TOKEN)).text;
    expect(text).toContain('tristate_calls_total{tenant="default",tool="issue_refund",outcome="SUCCEEDED"} 1\n');
    expect(text).toContain('tristate_call_duration_seconds_count{tenant="default",tool="issue_refund"} 1\n');
  });

  it("calls refused before sending and names an agent makes up create no series", async () => {
    const before = (await scrape(TOKEN)).text;
    const bad = await execute(stack.keys.agent, "run-b", "s1", "issue_refund", { order_id: "X", amount: "lots" });
    expect(JSON.stringify(bad)).toContain("INVALID_ARGUMENTS");
    const made = await execute(stack.keys.agent, "run-b", "s2", 'made"up\\tool', refund("X-1"));
    expect(JSON.stringify(made)).toMatch(/UNKNOWN_TOOL|tool/);
    const internal = await execute(stack.keys.agent, "run-b", "s3", "tristate.notify.webhook", {});
    expect(JSON.stringify(internal)).toContain("UNKNOWN_TOOL");
    const client = await mcpClient(stack.service.url, acme.agent);
    try {
      await expect(client.callTool({ name: `random-${Date.now()}`, arguments: {} })).rejects.toThrow(/unknown tool/);
    } finally {
      await client.close();
    }
    const after = (await scrape(TOKEN)).text;
    expect(after).not.toMatch(/made|random-|tristate\.notify/);
    // The bad-input refusal counted nothing: the same sample lines as before.
    expect(lines(after, "tristate_calls_total")).toEqual(lines(before, "tristate_calls_total"));
  });

  it("a repeat of a step answered UNKNOWN that then reads the outcome is not a second call (the resolution counts once); a new attempt after FAILED_NO_EFFECT is", async () => {
    const keys = new ApiKeyStore(stack.service.services.store.prisma);
    const beta = (await keys.create({ name: "beta agent", role: "agent", tenant: "beta" })).secret;
    stack.remote.fault({ commit: true, answer: 504 });
    stack.remote.probesFail = true;
    try {
      expect(await execute(beta, "run-u", "s1", "issue_refund", refund("U-1"))).toMatchObject({ status: "UNKNOWN" });
    } finally {
      stack.remote.probesFail = false;
    }
    const repeat = await execute(beta, "run-u", "s1", "issue_refund", refund("U-1"));
    expect(repeat).toMatchObject({ status: "SUCCEEDED", resolution: "found" });
    // A definite failure, then the step again: a new attempt is sent, a new call.
    stack.remote.fault({ commit: false, answer: 422 });
    expect(await execute(beta, "run-u", "s2", "issue_refund", refund("U-2"))).toMatchObject({
      status: "FAILED_NO_EFFECT",
    });
    expect(await execute(beta, "run-u", "s2", "issue_refund", refund("U-2"))).toMatchObject({
      status: "SUCCEEDED",
      attempt: 2,
    });
    const text = (await scrape(TOKEN)).text;
    const calls = lines(text, "tristate_calls_total").filter((l) => l.includes('tenant="beta"'));
    expect(calls).toContain('tristate_calls_total{tenant="beta",tool="issue_refund",outcome="UNKNOWN"} 1');
    expect(calls).toContain('tristate_calls_total{tenant="beta",tool="issue_refund",outcome="SUCCEEDED"} 1');
    expect(calls).toContain('tristate_calls_total{tenant="beta",tool="issue_refund",outcome="FAILED_NO_EFFECT"} 1');
    expect(text).toContain(
      'tristate_unknown_resolutions_total{tenant="beta",tool="issue_refund",resolution="found"} 1\n',
    );
  });

  it("an UNKNOWN settled by the sweeper's reconcile counts its resolution once, however often reconciled", async () => {
    const keys = new ApiKeyStore(stack.service.services.store.prisma);
    const gamma = (await keys.create({ name: "gamma agent", role: "agent", tenant: "gamma" })).secret;
    stack.remote.fault({ commit: true, answer: 504 });
    stack.remote.probesFail = true;
    let key: string;
    try {
      const unknown = await execute(gamma, "run-s", "s1", "issue_refund", refund("G-1"));
      expect(unknown).toMatchObject({ status: "UNKNOWN" });
      key = unknown.idempotency_key;
    } finally {
      stack.remote.probesFail = false;
    }
    const executor = stack.service.services.tenants.executor("gamma");
    for (let i = 0; i < 3; i++) {
      expect(await executor.reconcileKey(key, Deadline.after(8000), "sweeper")).toMatchObject({
        status: "SUCCEEDED",
        resolution: "found",
      });
    }
    const text = (await scrape(TOKEN)).text;
    expect(text).toContain(
      'tristate_unknown_resolutions_total{tenant="gamma",tool="issue_refund",resolution="found"} 1\n',
    );
    expect(text).toContain('tristate_calls_total{tenant="gamma",tool="issue_refund",outcome="UNKNOWN"} 1\n');
    expect(text).toContain('tristate_calls_total{tenant="gamma",tool="issue_refund",outcome="SUCCEEDED"} 0\n');
  });

  it("every outcome of a called tool is exported from its first call, at 0 until it happens", async () => {
    const text = (await scrape(TOKEN)).text;
    for (const outcome of ["SUCCEEDED", "FAILED_NO_EFFECT", "UNKNOWN"]) {
      expect(text).toMatch(
        new RegExp(`tristate_calls_total\\{tenant="acme",tool="issue_refund",outcome="${outcome}"\\} \\d`),
      );
    }
    expect(text).toContain('tristate_calls_total{tenant="default",tool="issue_refund",outcome="UNKNOWN"} 0\n');
    // Tools never called export no call series (labels stay bounded by use).
    expect(text).not.toContain('tristate_calls_total{tenant="acme",tool="reverse_refund"');
  });
});

describe("the gauge refresher under a stalled database", () => {
  it("keeps one refresh in flight however long a read hangs, picks up new tenants, and stops with shutdown", async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    let started = 0;
    let release: () => void = () => {};
    let gate = new Promise<void>((r) => {
      release = r;
    });
    const tenants = ["default"];
    const db = {
      reads: () => ({
        needsHumanSummary: async () => {
          started++;
          inFlight++;
          maxInFlight = Math.max(maxInFlight, inFlight);
          await gate;
          inFlight--;
          return { count: 1, oldestCreatedAtEpochMs: null, oldestAgeMs: 1000 };
        },
        listStale: async () => ({ total: 0, items: [] }),
      }),
    } as unknown as Pick<TristateDatabase, "reads">;
    const metrics = createMetrics({
      env: readEnv({ TRISTATE_METRICS_REFRESH_MS: "100" }),
      db,
      tenants: async () => [...tenants],
      tools: [],
      now: () => Date.now(),
      logger: pino({ level: "silent" }),
    });
    try {
      await new Promise((r) => setTimeout(r, 600)); // six ticks while the first read hangs
      expect(maxInFlight).toBe(1);
      expect(started).toBe(1);
      tenants.push("acme"); // a tenant made after start
      release();
      gate = Promise.resolve();
      await metrics.refresh();
      expect(await metrics.scrape(null)).toContain('tristate_human_queue_records{tenant="acme"} 1');
    } finally {
      await metrics.shutdown();
    }
    const after = started;
    await new Promise((r) => setTimeout(r, 350));
    expect(started).toBe(after); // no timer left
  });
});

describe("label text", () => {
  it("escapes quotes, backslashes and newlines in label values (names are also refused upstream)", async () => {
    const metrics = createMetrics({
      env: readEnv({ TRISTATE_METRICS_REFRESH_MS: "3600000" }),
      db: { reads: () => ({}) } as unknown as Pick<TristateDatabase, "reads">,
      tenants: async () => [],
      tools: [],
      now: () => Date.now(),
      logger: pino({ level: "silent" }),
    });
    try {
      metrics.compensationSettled('a"b', 'x\\"} 1\nevil_total{tenant="other', "failed");
      const text = await metrics.scrape(null);
      expect(text).not.toMatch(/^evil_total/m);
      expect(text).toContain(
        'tristate_compensations_total{tenant="a\\"b",tool="x\\\\\\"} 1\\nevil_total{tenant=\\"other",result="failed"} 1',
      );
      expect(await metrics.scrape("other")).not.toContain("tristate_compensations_total{");
    } finally {
      await metrics.shutdown();
    }
  });
});

describe("TRISTATE_METRICS_TOKEN", () => {
  it("refuses a token with whitespace (a bearer header cannot carry it: every scrape would be 401)", () => {
    expect(() => readEnv({ TRISTATE_METRICS_TOKEN: "my metrics token 0123456789" })).toThrow(/TRISTATE_METRICS_TOKEN/);
    expect(() => readEnv({ TRISTATE_METRICS_TOKEN: "short" })).toThrow(/TRISTATE_METRICS_TOKEN/);
    expect(readEnv({ TRISTATE_METRICS_TOKEN: TOKEN }).TRISTATE_METRICS_TOKEN).toBe(TOKEN);
  });
});

describe("countedExecutor on its own", () => {
  it("counts an UNKNOWN answered before the log told (INTENT_LOG_TIMEOUT) and a read-only call; not a refusal nor a replay", async () => {
    const answered: string[] = [];
    const metrics = {
      callAnswered: (_t: string, tool: string, outcome: string) => answered.push(`${tool}:${outcome}`),
    } as unknown as TristateMetrics;
    let next: Partial<Envelope> = {};
    const fake = {
      tools: new Map([
        ["pay", { name: "pay", kind: "unsafe" }],
        ["look", { name: "look", kind: "read_only" }],
      ]),
      call: async () => next as Envelope,
    } as unknown as Executor;
    const counted = countedExecutor(fake, "default", metrics);
    const input = (tool: string) => ({ runId: "r", stepId: "s", tool, args: {}, deadline: Deadline.after(1000) });
    next = { status: "UNKNOWN", attempt: 0, replayed: false, error: { code: "INTENT_LOG_TIMEOUT", message: "" } };
    await counted.call(input("pay"));
    next = { status: "FAILED_NO_EFFECT", attempt: 0, replayed: false };
    await counted.call(input("pay"));
    next = { status: "SUCCEEDED", attempt: 1, replayed: true };
    await counted.call(input("pay"));
    next = { status: "SUCCEEDED", attempt: 1, replayed: false };
    await counted.call(input("look"));
    await counted.call(input("nope"));
    expect(answered).toEqual(["pay:UNKNOWN", "look:SUCCEEDED"]);
  });
});
