import { sweepStale } from "@tristate/core";
import type { Logger } from "./logger.ts";
import type { Tenants } from "./tenants.ts";

/** A running sweeper: call `stop()` to end it after the current pass. */
export interface SweeperLoop {
  /** Resolves when the pass in progress (if any) has finished. */
  stop(): Promise<void>;
}

/**
 * Runs `sweepStale` every `intervalMs`. Several service replicas may run it on one database: records
 * are taken with `FOR UPDATE SKIP LOCKED`, so each is reconciled by one replica. Each pass's work is
 * in the records' timelines (`lease_expired`, `sweep`, probes, resends). A pass visits every tenant
 * in turn, each with its own executor and a claim filtered by its tenant (up to `limit` records each).
 */
export function startSweeper(options: {
  tenants: Tenants;
  intervalMs: number;
  limit: number;
  logger: Logger;
}): SweeperLoop {
  let stopped = false;
  let running: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;
  const pass = async () => {
    let tenants: string[];
    try {
      tenants = await options.tenants.list();
    } catch (error) {
      options.logger.error({ err: error }, "sweeper pass failed: could not list the tenants");
      return;
    }
    for (const tenant of tenants) {
      if (stopped) return;
      try {
        const store = options.tenants.store(tenant);
        const executor = options.tenants.executor(tenant);
        const report = await sweepStale({ store, executor, limit: options.limit });
        for (const r of report.results) {
          options.logger.info(
            {
              tenant,
              idempotency_key: r.key,
              status: r.envelope?.status,
              resolution: r.envelope?.resolution,
              error: r.error,
            },
            "sweeper reconciled a record",
          );
        }
      } catch (error) {
        options.logger.error({ err: error, tenant }, "sweeper pass failed");
      }
    }
  };
  const schedule = () => {
    if (stopped || options.intervalMs <= 0) return;
    timer = setTimeout(() => {
      running = pass().finally(() => {
        running = null;
        schedule();
      });
    }, options.intervalMs);
    timer.unref();
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
