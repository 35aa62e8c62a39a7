import type { Meter, ObservableResult } from "@opentelemetry/api";
import type { MetricsOptions } from "./types.ts";

/** One tenant's database gauges as last read. */
interface TenantGauges {
  /** Records in the human queue. */
  queued: number;
  /** Age of the oldest of them by the database's clock, s (0 when none waits). */
  oldestAgeS: number;
  /** Stale PENDING records (PENDING past their lease, waiting for a sweeper). */
  stale: number;
}

/** The refresher started by {@link startGaugeRefresher}. */
export interface GaugeRefresher {
  /**
   * Reads every tenant's gauges now — after the read in flight, if any — and resolves when read; a
   * failure is logged and the last values kept. Never rejects.
   */
  refresh(): Promise<void>;
  /** Stops the timer and later refreshes (a read in flight finishes on its own). */
  stop(): void;
}

/**
 * The gauges that need the database — `tristate_human_queue_records{tenant}`,
 * `tristate_human_queue_oldest_age_seconds{tenant}`, `tristate_stale_pending_records{tenant}` — and
 * `tristate_tool_timeout_seconds{tenant,tool}` (catalog × tenants). One background loop reads them
 * every `TRISTATE_METRICS_REFRESH_MS` (two index reads per tenant, as `stats.attention` does:
 * `needsHumanSummary` and `listStale` with `limit: 1`, whose `total` is a count on the live re-check
 * index); the observable gauges' callbacks read the cache, so a scrape never queries the database and
 * every replica reports the same values.
 */
export function startGaugeRefresher(meter: Meter, options: MetricsOptions): GaugeRefresher {
  const { db, logger } = options;
  let cache = new Map<string, TenantGauges>();
  let running: Promise<void> | null = null;
  const refreshOnce = async () => {
    const tenants = await options.tenants();
    const next = new Map<string, TenantGauges>();
    for (const tenant of tenants) {
      const reads = db.reads(tenant);
      const [queue, stale] = await Promise.all([
        reads.needsHumanSummary(),
        reads.listStale({ nowEpochMs: options.now(), limit: 1 }),
      ]);
      next.set(tenant, { queued: queue.count, oldestAgeS: (queue.oldestAgeMs ?? 0) / 1000, stale: stale.total });
    }
    cache = next;
  };
  // One read in flight at a time (a stalled database piles nothing up); a refresh asked for while one
  // runs waits for it and then reads again once (at most one waiting), so its caller sees reads made
  // after the call — tenants made meanwhile included.
  let next: Promise<void> | null = null;
  let stopped = false;
  const refresh = (): Promise<void> => {
    if (stopped) return Promise.resolve();
    if (running) {
      next ??= running.then(() => {
        next = null;
        return refresh();
      });
      return next;
    }
    running = refreshOnce()
      .catch((error: unknown) => logger.warn({ err: error }, "metrics: refreshing the database gauges failed"))
      .finally(() => {
        running = null;
      });
    return running;
  };
  const observe = (result: ObservableResult, value: (g: TenantGauges) => number) => {
    for (const [tenant, gauges] of cache) result.observe(value(gauges), { tenant });
  };
  meter
    .createObservableGauge("tristate_human_queue_records", { description: "Records waiting for a person" })
    .addCallback((r) => observe(r, (g) => g.queued));
  meter
    .createObservableGauge("tristate_human_queue_oldest_age_seconds", {
      description: "Age of the oldest record waiting for a person, seconds (0: none waits)",
      unit: "s",
    })
    .addCallback((r) => observe(r, (g) => g.oldestAgeS));
  meter
    .createObservableGauge("tristate_stale_pending_records", {
      description: "PENDING records past their lease, waiting for a sweeper",
    })
    .addCallback((r) => observe(r, (g) => g.stale));
  const timeouts = options.tools.map((tool) => ({ tool: tool.name, seconds: tool.timeoutMs / 1000 }));
  meter
    .createObservableGauge("tristate_tool_timeout_seconds", {
      description: "Each catalog tool's timeout, seconds (set latency against it)",
      unit: "s",
    })
    .addCallback((result) => {
      for (const tenant of cache.keys())
        for (const { tool, seconds } of timeouts) result.observe(seconds, { tenant, tool });
    });
  void refresh();
  const timer = setInterval(() => void refresh(), options.env.TRISTATE_METRICS_REFRESH_MS);
  timer.unref();
  return {
    refresh,
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
  };
}
