/**
 * `GET /metrics` (issue 23 §1) on a running service over HTTP, real PostgreSQL: who may scrape what
 * (viewer of a tenant: its series only; admin and the metrics token: all; agent 403; none or bad
 * 401), and the values after calls that end SUCCEEDED and UNKNOWN, a person's resolution, a failed
 * compensation, a queue item and a stale PENDING record. The database gauges come from the
 * refresher's cache: scrapes run no query.
 */
import { randomUUID } from "node:crypto";
import { ApiKeyStore } from "@tristate/db";
import { refundTool } from "@tristate/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { envelopeOf, mcpClient } from "./mcp-support.ts";
import { reversibleRefundTools } from "./reversible-refund.ts";
import { startStack, type TestStack } from "./support.ts";

const TOKEN = "metrics-token-0123456789";
let stack: TestStack;
const acme = {} as Record<"agent" | "viewer" | "operator", string>;

/** One sample of the exposition: `name{labels} value`. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text format's samples (comments skipped). */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[k!] = v!;
    samples.push({ name: m[1]!, labels, value: m[3] === "+Inf" ? Number.POSITIVE_INFINITY : Number(m[3]) });
  }
  return samples;
}

/** The value of the one sample named `name` whose labels include `labels`; undefined when none. */
function sampleValue(samples: Sample[], name: string, labels: Record<string, string>): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  expect(found.length, `${name} ${JSON.stringify(labels)}`).toBeLessThanOrEqual(1);
  return found[0]?.value;
}

async function scrape(bearer: string | null): Promise<{ status: number; text: string; headers: Headers }> {
  const res = await fetch(`${stack.service.url}/metrics`, {
    headers: bearer === null ? {} : { authorization: `Bearer ${bearer}` },
  });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

async function execute(key: string, runId: string, stepId: string, tool: string, order: string) {
  const res = await stack.post(
    "calls.execute",
    { runId, stepId, tool, args: { order_id: order, amount: "10.00", currency: "EUR" }, budgetMs: 8000 },
    key,
  );
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json.result.data;
}

beforeAll(async () => {
  stack = await startStack({
    tools: (remote) => [
      ...reversibleRefundTools(remote),
      refundTool(remote, { name: "unsafe_refund", kind: "unsafe", probe: undefined, probeByIdentity: undefined }),
    ],
    env: { TRISTATE_METRICS_TOKEN: TOKEN, TRISTATE_METRICS_REFRESH_MS: "3600000", TRISTATE_AUTH_FAILURES: "1000" },
  });
  const keys = new ApiKeyStore(stack.service.services.store.prisma);
  for (const role of ["agent", "viewer", "operator"] as const) {
    acme[role] = (await keys.create({ name: `acme ${role}`, role, tenant: "acme" })).secret;
  }
  const { agent, operator } = stack.keys;
  // default: two SUCCEEDED refunds, two UNKNOWNs handed to a person (one then resolved), a failed compensation.
  expect(await execute(agent, "run-ok", "s1", "issue_refund", "A-1")).toMatchObject({ status: "SUCCEEDED" });
  for (const order of ["Q-1", "Q-2"]) {
    stack.remote.fault({ answer: 504, commit: false });
    expect(await execute(agent, "run-q", order, "unsafe_refund", order)).toMatchObject({
      status: "UNKNOWN",
      resolution: "needs_human",
    });
  }
  const q2 = (await stack.service.services.tenants.store("default").listByRun("run-q")).find(
    (r) => r.stepId === "Q-2",
  )!;
  const resolved = await stack.post(
    "queue.resolve",
    {
      key: q2.key,
      action: "confirm_no_effect",
      note: "nothing at the PSP",
      expectedVersion: q2.version,
      operatorActionId: randomUUID(),
    },
    operator,
  );
  expect(resolved.status, JSON.stringify(resolved.json)).toBe(200);
  expect(await execute(agent, "run-abort", "refund", "issue_refund", "A-2")).toMatchObject({ status: "SUCCEEDED" });
  stack.remote.fault({ answer: 422, commit: false });
  const aborted = await stack.post("runs.abort", { runId: "run-abort", budgetMs: 8000 }, agent);
  expect(aborted.status, JSON.stringify(aborted.json)).toBe(200);
  // acme: one SUCCEEDED refund, made stale PENDING by hand (as the tenancy fixtures do).
  const stale = (await execute(acme.agent, "run-stale", "p1", "issue_refund", "S-1")).idempotency_key;
  await stack.service.services.tenants.outcomesWritten();
  await stack.service.services.store.pool.query(
    "UPDATE intent_records SET status = 'PENDING', lease_until_at = now() - interval '1 minute', recheck_at = now() - interval '1 minute' WHERE tenant = 'acme' AND key = $1",
    [stale],
  );
  await stack.service.services.metrics.refresh();
}, 90_000);

afterAll(async () => {
  await stack?.close();
});

describe("GET /metrics", () => {
  it("refuses no key and a bad key (401, WWW-Authenticate: Bearer) and an agent key (403)", async () => {
    const none = await scrape(null);
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(/^Bearer/);
    const bad = await scrape("ts_viewer_not-a-real-key");
    expect(bad.status).toBe(401);
    expect(bad.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect((await scrape(`${TOKEN}x`)).status).toBe(401);
    expect((await scrape(stack.keys.agent)).status).toBe(403);
    expect((await scrape(acme.agent)).status).toBe(403);
  });

  it("the token and an admin key see every tenant's series, with the values of the scenario", async () => {
    const res = await scrape(TOKEN);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    const s = parse(res.text);
    const calls = (tenant: string, tool: string, outcome: string) =>
      sampleValue(s, "tristate_calls_total", { tenant, tool, outcome });
    expect(calls("default", "issue_refund", "SUCCEEDED")).toBe(2);
    expect(calls("default", "unsafe_refund", "UNKNOWN")).toBe(2);
    expect(calls("default", "issue_refund", "UNKNOWN")).toBe(0); // exported from the first call, at 0
    expect(calls("acme", "issue_refund", "SUCCEEDED")).toBe(1);
    const resolutions = (tool: string, resolution: string) =>
      sampleValue(s, "tristate_unknown_resolutions_total", { tenant: "default", tool, resolution });
    expect(resolutions("unsafe_refund", "needs_human")).toBe(2);
    expect(resolutions("unsafe_refund", "human_confirmed_no_effect")).toBe(1);
    expect(
      sampleValue(s, "tristate_compensations_total", { tenant: "default", tool: "reverse_refund", result: "failed" }),
    ).toBe(1);
    expect(sampleValue(s, "tristate_compensations_total", { result: "succeeded" })).toBeUndefined();
    // The queue: Q-1, and the refund whose reversal failed (COMPENSATION_FAILED).
    expect(sampleValue(s, "tristate_human_queue_records", { tenant: "default" })).toBe(2);
    expect(sampleValue(s, "tristate_human_queue_records", { tenant: "acme" })).toBe(0);
    expect(sampleValue(s, "tristate_human_queue_oldest_age_seconds", { tenant: "default" })).toBeGreaterThan(0);
    expect(sampleValue(s, "tristate_human_queue_oldest_age_seconds", { tenant: "acme" })).toBe(0);
    expect(sampleValue(s, "tristate_stale_pending_records", { tenant: "acme" })).toBe(1);
    expect(sampleValue(s, "tristate_stale_pending_records", { tenant: "default" })).toBe(0);
    expect(sampleValue(s, "tristate_tool_timeout_seconds", { tenant: "acme", tool: "issue_refund" })).toBe(0.5);
    expect(sampleValue(s, "tristate_tool_timeout_seconds", { tenant: "default", tool: "reverse_refund" })).toBe(1);
    expect(sampleValue(s, "tristate_call_duration_seconds_count", { tenant: "default", tool: "issue_refund" })).toBe(2);
    const inf = sampleValue(s, "tristate_call_duration_seconds_bucket", {
      tenant: "default",
      tool: "issue_refund",
      le: "+Inf",
    });
    expect(inf).toBe(2);
    const admin = parse((await scrape(stack.keys.admin)).text);
    expect(
      sampleValue(admin, "tristate_calls_total", { tenant: "acme", tool: "issue_refund", outcome: "SUCCEEDED" }),
    ).toBe(1);
    expect(
      sampleValue(admin, "tristate_calls_total", { tenant: "default", tool: "issue_refund", outcome: "SUCCEEDED" }),
    ).toBe(2);
  });

  it("a tenant's viewer and operator see only that tenant's series", async () => {
    for (const key of [acme.viewer, acme.operator]) {
      const res = await scrape(key);
      expect(res.status).toBe(200);
      const s = parse(res.text).filter((x) => x.name.startsWith("tristate_"));
      expect(s.length).toBeGreaterThan(0);
      expect(s.every((x) => x.labels.tenant === "acme")).toBe(true);
      expect(sampleValue(s, "tristate_calls_total", { tool: "issue_refund", outcome: "SUCCEEDED" })).toBe(1);
      expect(sampleValue(s, "tristate_stale_pending_records", {})).toBe(1);
    }
    const own = parse((await scrape(stack.keys.viewer)).text).filter((x) => x.name.startsWith("tristate_"));
    expect(own.every((x) => x.labels.tenant === "default")).toBe(true);
    expect(sampleValue(own, "tristate_human_queue_records", {})).toBe(2);
  });

  it("scrapes read the refresher's cache: no query per scrape, new values only after a refresh", async () => {
    const { db } = stack.service.services;
    const reads = db.reads.bind(db);
    let queried = 0;
    db.reads = (tenant) => {
      queried++;
      return reads(tenant);
    };
    try {
      const q1 = (await stack.service.services.tenants.store("default").listByRun("run-q")).find(
        (r) => r.stepId === "Q-1",
      )!;
      const resolved = await stack.post(
        "queue.resolve",
        {
          key: q1.key,
          action: "confirm_effect",
          note: "the PSP shows it",
          expectedVersion: q1.version,
          operatorActionId: randomUUID(),
        },
        stack.keys.operator,
      );
      expect(resolved.status, JSON.stringify(resolved.json)).toBe(200);
      for (let i = 0; i < 5; i++) {
        const s = parse((await scrape(TOKEN)).text);
        expect(sampleValue(s, "tristate_human_queue_records", { tenant: "default" })).toBe(2); // cached
        // Counters move at once: they are counted by the write, not read from the database.
        expect(
          sampleValue(s, "tristate_unknown_resolutions_total", {
            tenant: "default",
            tool: "unsafe_refund",
            resolution: "human_confirmed_effect",
          }),
        ).toBe(1);
      }
      expect(queried).toBe(0);
      await stack.service.services.metrics.refresh();
      expect(queried).toBe(2); // one read per tenant (default, acme)
      const s = parse((await scrape(TOKEN)).text);
      expect(sampleValue(s, "tristate_human_queue_records", { tenant: "default" })).toBe(1);
    } finally {
      db.reads = reads;
    }
  });

  it("counts MCP calls like tRPC calls (both go through the tenant's executor)", async () => {
    const client = await mcpClient(stack.service.url, acme.agent);
    try {
      const result = await client.callTool({
        name: "issue_refund",
        arguments: { order_id: "M-1", amount: "10.00", currency: "EUR" },
      });
      expect(envelopeOf(result)).toMatchObject({ status: "SUCCEEDED" });
    } finally {
      await client.close();
    }
    const s = parse((await scrape(acme.viewer)).text);
    expect(sampleValue(s, "tristate_calls_total", { tool: "issue_refund", outcome: "SUCCEEDED" })).toBe(2);
    expect(sampleValue(s, "tristate_call_duration_seconds_count", { tool: "issue_refund" })).toBe(2);
  });

  it("a compensation that succeeds counts once, a second abort of the run adds nothing", async () => {
    const { agent } = stack.keys;
    expect(await execute(agent, "run-undo", "refund", "issue_refund", "A-3")).toMatchObject({ status: "SUCCEEDED" });
    for (let i = 0; i < 2; i++) {
      const aborted = await stack.post("runs.abort", { runId: "run-undo", budgetMs: 8000 }, agent);
      expect(aborted.status, JSON.stringify(aborted.json)).toBe(200);
    }
    const s = parse((await scrape(TOKEN)).text);
    const compensations = (result: string) =>
      sampleValue(s, "tristate_compensations_total", { tenant: "default", tool: "reverse_refund", result });
    expect(compensations("succeeded")).toBe(1);
    expect(compensations("failed")).toBe(1);
  });
});
