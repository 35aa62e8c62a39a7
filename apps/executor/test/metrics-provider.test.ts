/**
 * The metrics provider on its own (issue 23 §1): the database gauges are read on the refresher's
 * cadence (`TRISTATE_METRICS_REFRESH_MS`), never per scrape; with an OTLP endpoint the same
 * instruments reach a real OTLP/HTTP receiver; the Prometheus names carry `_total` on counters.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { TristateDatabase } from "@tristate/db";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { readEnv } from "../src/env.ts";
import { createMetrics } from "../src/metrics/index.ts";
import type { TristateMetrics } from "../src/metrics/types.ts";

const logger = pino({ level: "silent" });
let metrics: TristateMetrics | null = null;
let server: Server | null = null;

afterEach(async () => {
  await metrics?.shutdown();
  metrics = null;
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = null;
});

/** A database whose two gauge reads count their calls and answer `queued` records. */
function countingDb(queued: () => number) {
  const reads = { count: 0 };
  const db = {
    reads: () => ({
      needsHumanSummary: async () => {
        reads.count++;
        return { count: queued(), oldestCreatedAtEpochMs: null, oldestAgeMs: queued() ? 90_000 : null };
      },
      listStale: async () => ({ total: 3, items: [] }),
    }),
  } as unknown as Pick<TristateDatabase, "reads">;
  return { db, reads };
}

describe("metrics provider", () => {
  it("reads the database gauges every TRISTATE_METRICS_REFRESH_MS, not per scrape", async () => {
    let queued = 4;
    const { db, reads } = countingDb(() => queued);
    metrics = createMetrics({
      env: readEnv({ TRISTATE_METRICS_REFRESH_MS: "200" }),
      db,
      tenants: async () => ["default"],
      tools: [],
      now: () => Date.now(),
      logger,
    });
    await metrics.refresh();
    const started = performance.now();
    const first = reads.count;
    let text = "";
    for (let i = 0; i < 30; i++) text = await metrics.scrape(null);
    expect(text).toContain('tristate_human_queue_records{tenant="default"} 4');
    expect(text).toContain('tristate_human_queue_oldest_age_seconds{tenant="default"} 90');
    expect(text).toContain('tristate_stale_pending_records{tenant="default"} 3');
    // 30 scrapes: at most the refreshes the timer made meanwhile, not 30 reads.
    const elapsedMs = performance.now() - started;
    expect(reads.count - first).toBeLessThanOrEqual(Math.floor(elapsedMs / 200) + 1);
    queued = 0;
    await new Promise((r) => setTimeout(r, 1100));
    const refreshes = reads.count - first;
    expect(refreshes).toBeGreaterThanOrEqual(3); // about 1100 / 200 (fewer on a busy machine, never one per scrape)
    expect(refreshes).toBeLessThanOrEqual(8);
    expect(await metrics.scrape(null)).toContain('tristate_human_queue_records{tenant="default"} 0');
  });

  it("names counters with _total and exports the same instruments over OTLP/HTTP when an endpoint is set", async () => {
    const bodies: string[] = [];
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => {
        body += chunk;
      });
      req.on("end", () => {
        if (req.url === "/v1/metrics") bodies.push(body);
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    metrics = createMetrics({
      env: readEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_METRIC_EXPORT_INTERVAL: "1000" }),
      db: countingDb(() => 0).db,
      tenants: async () => ["default"],
      tools: [],
      now: () => Date.now(),
      logger,
    });
    metrics.callAnswered("default", "issue_refund", "UNKNOWN", 250);
    metrics.compensationSettled("default", "reverse_refund", "failed");
    metrics.notificationDelivered("default", "webhook", "delivered");
    const text = await metrics.scrape(null);
    expect(text).toContain('tristate_calls_total{tenant="default",tool="issue_refund",outcome="UNKNOWN"} 1');
    expect(text).toContain('tristate_compensations_total{tenant="default",tool="reverse_refund",result="failed"} 1');
    expect(text).toContain('tristate_notifications_total{tenant="default",channel="webhook",result="delivered"} 1');
    expect(text).toContain('tristate_call_duration_seconds_sum{tenant="default",tool="issue_refund"} 0.25');
    expect(await metrics.scrape("acme")).not.toContain("tenant=");
    const until = Date.now() + 5000;
    while (!bodies.some((b) => b.includes("tristate_calls")) && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 100));
    }
    const exported = bodies.find((b) => b.includes("tristate_calls"));
    expect(exported).toBeDefined();
    expect(exported).toContain("issue_refund");
    expect(exported).toContain("tristate_compensations");
  });
});
