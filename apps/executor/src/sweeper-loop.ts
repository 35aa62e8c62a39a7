import type { IntentStore } from "@tristate/core";
import { type Executor, sweepStale } from "@tristate/core";
import type { Logger } from "./logger.ts";

/** A running sweeper: call `stop()` to end it after the current pass. */
export interface SweeperLoop {
  /** Resolves when the pass in progress (if any) has finished. */
  stop(): Promise<void>;
}

/**
 * Runs `sweepStale` every `intervalMs`. Several service replicas may run it on one database: records
 * are taken with `FOR UPDATE SKIP LOCKED`, so each is reconciled by one replica. Each pass's work is
 * in the records' timelines (`lease_expired`, `sweep`, probes, resends).
 */
export function startSweeper(options: {
  store: IntentStore;
  executor: Executor;
  intervalMs: number;
  limit: number;
  logger: Logger;
}): SweeperLoop {
  let stopped = false;
  let running: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;
  const pass = async () => {
    try {
      const report = await sweepStale({ store: options.store, executor: options.executor, limit: options.limit });
      for (const r of report.results) {
        options.logger.info(
          { idempotency_key: r.key, status: r.envelope?.status, resolution: r.envelope?.resolution, error: r.error },
          "sweeper reconciled a record",
        );
      }
    } catch (error) {
      options.logger.error({ err: error }, "sweeper pass failed");
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
