/**
 * Issue 23 §2, "done when": a real Prometheus (Debian's package) scrapes a running service's GET /metrics
 * with the TRISTATE_METRICS_TOKEN bearer and evaluates the shipped alert rules — only their `for:`
 * durations shortened — against a scenario with UNKNOWNs, a record waiting for a person and a failed
 * compensation: the expected alerts fire (Prometheus' /api/v1/alerts), TristateExecutorDown only once the
 * service is stopped. The thresholds are the shipped ones: the waiting record is made 20 minutes old in
 * this test's own database, not by editing the 15-minute threshold.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { FakeRemote } from "@tristate/testing";
import { refundTool } from "@tristate/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type PromAlert,
  portInUse,
  type RunningPrometheus,
  rulesWithShortFor,
  shippedRules,
  startPrometheus,
} from "./prometheus-support.ts";
import { reversibleRefundTools } from "./reversible-refund.ts";
import { type Json, startStack, type TestStack } from "./support.ts";

const token = randomBytes(24).toString("hex");
const TENANT = "default";
let stack: TestStack;
let prom: RunningPrometheus;
let serviceClosed = false;
let step = 0;

/** The refund with a compensation (issue_refund, reverse_refund) and an unsafe refund with no probe. */
function tools(remote: FakeRemote) {
  return [
    ...reversibleRefundTools(remote),
    // No probe: an ambiguous answer is answered UNKNOWN and waits for a person.
    refundTool(remote, { name: "risky_refund", kind: "unsafe", probe: undefined, probeByIdentity: undefined }),
  ];
}

/** One call of `tool` in `runId`; `fault` makes the remote answer 504 without doing anything (UNKNOWN). */
async function call(tool: string, options: { unknown?: boolean; runId?: string } = {}): Promise<Json> {
  if (options.unknown) stack.remote.fault({ answer: 504, commit: false });
  step += 1;
  const res = await stack.post("calls.execute", {
    runId: options.runId ?? "run-metrics",
    stepId: `step-${step}`,
    tool,
    args: { order_id: `M-${step}`, amount: "10.00", currency: "EUR" },
    budgetMs: 10_000,
  });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  const envelope = res.json.result.data;
  expect(envelope.status).toBe(options.unknown ? "UNKNOWN" : "SUCCEEDED");
  return envelope;
}

/** Polls `probe` every 500 ms until it answers a value, or throws `what` with Prometheus' state after `ms`. */
async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) {
      const alerts = await prom.alerts().catch((e: unknown) => String(e));
      const targets = await prom.api("targets").catch((e: unknown) => String(e));
      throw new Error(
        `${what}: not within ${ms} ms.\nalerts: ${JSON.stringify(alerts)}\ntargets: ${JSON.stringify(targets)}\n` +
          `prometheus output: ${prom.output().slice(-2000)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** The value of an instant query's first sample, or undefined when it has none. */
async function sample(query: string): Promise<number | undefined> {
  const data = await prom.api<{ result: { value: [number, string] }[] }>("query", { query });
  return data.result[0] ? Number(data.result[0].value[1]) : undefined;
}

const firing = (alerts: PromAlert[], name: string, labels: Record<string, string> = {}) =>
  alerts.find(
    (a) =>
      a.labels.alertname === name &&
      a.state === "firing" &&
      Object.entries(labels).every(([k, v]) => a.labels[k] === v),
  );

beforeAll(async () => {
  stack = await startStack({
    env: { TRISTATE_METRICS_TOKEN: token, TRISTATE_METRICS_REFRESH_MS: "500" },
    tools,
  });
  const rules = rulesWithShortFor(shippedRules(), 1);
  expect(rules).not.toBe(shippedRules());
  prom = await startPrometheus({ target: new URL(stack.service.url).host, token, rules });
}, 60_000);

afterAll(async () => {
  await prom?.stop();
  if (prom) expect(await portInUse(prom.port)).toBe(false);
  if (serviceClosed) {
    await stack?.remote.close();
    await stack?.db.drop();
  } else await stack?.close();
});

describe("the shipped alert rules on a real Prometheus scraping a running service", () => {
  it("scrapes /metrics with the metrics token: the target is up and TristateExecutorDown does not fire", async () => {
    await until("the executor target up", async () =>
      (await sample('up{job="tristate-executor"}')) === 1 ? true : undefined,
    );
    // Two more evaluations with the target up: the executor-down rule has had its chance to go wrong.
    await new Promise((r) => setTimeout(r, 2500));
    const alerts = await prom.alerts();
    expect(alerts.filter((a) => a.labels.alertname === "TristateExecutorDown")).toEqual([]);
  });

  it("UNKNOWNs, a record waiting 20 minutes and a failed compensation fire their alerts", async () => {
    // First calls, so the counters' series exist before most calls land (`increase` counts from a series'
    // first scrape on).
    await call("risky_refund");
    const first = await call("risky_refund", { unknown: true });
    await until("the UNKNOWN counter scraped", () =>
      sample(`tristate_calls_total{tool="risky_refund",outcome="UNKNOWN",tenant="${TENANT}"}`),
    );
    // A failed compensation: the refund succeeds, its reversal is refused (423) when the run is aborted.
    await call("issue_refund", { runId: "run-compensation" });
    stack.remote.fault({ answer: 423, commit: false });
    const abort = await stack.post("runs.abort", { runId: "run-compensation", budgetMs: 10_000 });
    expect(abort.status).toBe(200);
    expect(abort.json.result.data.steps[0]).toMatchObject({ outcome: "compensation_failed" });
    // 24 more successes and 6 more UNKNOWNs of risky_refund: 7 of 32 calls (about 22 %, over 20 calls).
    for (let i = 0; i < 30; i++) await call("risky_refund", { unknown: i % 5 === 4 });
    // The first UNKNOWN has waited 20 minutes (made so in this test's own database).
    const aged = await stack.service.services.store.prisma.$executeRaw`
      UPDATE intent_records SET created_at = created_at - interval '20 minutes' WHERE key = ${first.idempotency_key}`;
    expect(aged).toBe(1);

    const alerts = await until("the three alerts firing", async () => {
      const now = await prom.alerts();
      const all = [
        firing(now, "TristateUnknownShareHigh", { tenant: TENANT, tool: "risky_refund" }),
        firing(now, "TristateHumanQueueWaiting", { tenant: TENANT }),
        firing(now, "TristateCompensationFailed", { tenant: TENANT, tool: "reverse_refund" }),
      ];
      return all.every(Boolean) ? now : undefined;
    });
    const share = firing(alerts, "TristateUnknownShareHigh")!;
    expect(Number(share.value)).toBeGreaterThan(0.05);
    expect(Number(share.value)).toBeLessThan(0.5);
    expect(share.annotations.dashboard).toBe(
      `http://localhost:3000/overview?tenant=${TENANT}&range=1h&sort=-unknownShareChange#reliability`,
    );
    const queue = firing(alerts, "TristateHumanQueueWaiting")!;
    expect(Number(queue.value)).toBeGreaterThan(1190);
    expect(queue.annotations.dashboard).toBe(`http://localhost:3000/queue?tenant=${TENANT}`);
    // `tool` is the compensating tool (docs/metrics.md).
    const compensation = firing(alerts, "TristateCompensationFailed")!;
    expect(compensation.annotations.summary).toBe(`reverse_refund (${TENANT}): a compensating call failed`);
    expect(compensation.annotations.dashboard).toBe(`http://localhost:3000/queue?tenant=${TENANT}`);
    // Only risky_refund's share is high; nothing is stale; the executor is scraped.
    expect(alerts.filter((a) => a.labels.alertname === "TristateUnknownShareHigh")).toHaveLength(1);
    expect(alerts.filter((a) => ["TristateStalePending", "TristateExecutorDown"].includes(a.labels.alertname))).toEqual(
      [],
    );
  });

  it("every query of the Grafana dashboard runs on the scraped series", async () => {
    const dashboard = JSON.parse(
      readFileSync(join(import.meta.dirname, "../../../tooling/grafana/dashboards/tristate.json"), "utf8"),
    );
    const exprs: { title: string; expr: string }[] = dashboard.panels.flatMap((p: Json) =>
      (p.targets ?? []).map((t: Json) => ({ title: p.title, expr: t.expr })),
    );
    expect(exprs.length).toBeGreaterThan(8);
    const empty: string[] = [];
    for (const { title, expr } of exprs) {
      const query = expr
        .replaceAll("$tenant", ".*")
        .replaceAll("$tool", ".*")
        .replaceAll("$__rate_interval", "1m")
        .replaceAll("$__range", "5m");
      const data = await prom.api<{ result: unknown[] }>("query", { query });
      if (data.result.length === 0) empty.push(title);
    }
    // No notification channel in this scenario: that panel alone may be empty.
    expect(empty.filter((t) => t !== "Notifications by result")).toEqual([]);
  });

  it("fires TristateExecutorDown once the service stops", async () => {
    await stack.service.close();
    serviceClosed = true;
    await until("TristateExecutorDown firing", async () => firing(await prom.alerts(), "TristateExecutorDown"));
  });
});
