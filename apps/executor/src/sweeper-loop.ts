import { nextSweepLimit, startSweepLoop, sweepStale } from "@tristate/core";
import type { Logger } from "./logger.ts";
import type { Tenants } from "./tenants.ts";

/** A running sweeper: call `stop()` to end it after the current pass. */
export interface SweeperLoop {
  /** Resolves when the pass in progress (if any) has finished. */
  stop(): Promise<void>;
}

/**
 * Runs the adaptive sweep loop (`startSweepLoop`): rounds of `sweepStale` passes, one per tenant in
 * turn, each with that tenant's executor and a claim filtered by its tenant (up to `limit` records
 * each). While rounds take records the next starts at once, with up to `lanes − 1` more beside it, so
 * a backlog after a crash drains at the rate passes run; when a round finds nothing the loop backs off
 * up to `intervalMs` (0: no sweeper).
 * Several service replicas may run it on one database: records are taken with `FOR UPDATE SKIP
 * LOCKED`, so each is reconciled by one replica. Each pass's work is in the records' timelines
 * (`lease_expired`, `sweep`, probes, resends).
 */
export function startSweeper(options: {
  tenants: Tenants;
  intervalMs: number;
  limit: number;
  /** Records of one pass reconciled at once (their timeline reads and outcome writes are grouped). @default 64 */
  concurrency?: number;
  /** Rounds run at once while there is a backlog (see `startSweepLoop`). @default 1 */
  lanes?: number;
  logger: Logger;
}): SweeperLoop {
  const concurrency = options.concurrency ?? 64;
  // Records per pass, per tenant (`nextSweepLimit`): after a pass that had to leave records (slow
  // probes), what it reconciled; passes that finish grow it back to `limit`.
  const limits = new Map<string, number>();
  return startSweepLoop({
    tenants: () => options.tenants.list(),
    idleMs: options.intervalMs,
    lanes: options.lanes ?? 1,
    async pass(tenant, claimed) {
      const started = performance.now();
      const limit = limits.get(tenant) ?? options.limit;
      const report = await sweepStale({
        store: options.tenants.store(tenant),
        executor: options.tenants.executor(tenant),
        limit,
        concurrency,
        onClaimed: claimed,
      });
      limits.set(tenant, nextSweepLimit(limit, report, options.limit, concurrency));
      if (report.taken > 0) {
        // One line per pass for an operator watching a backlog drain (the records have their own lines).
        const count = (status: string) => report.results.filter((r) => r.envelope?.status === status).length;
        options.logger.info(
          {
            tenant,
            limit,
            taken: report.taken,
            succeeded: count("SUCCEEDED"),
            failed_no_effect: count("FAILED_NO_EFFECT"),
            unknown: count("UNKNOWN"),
            errors: report.results.filter((r) => r.error !== undefined).length,
            left: report.left.length,
            duration_ms: Math.round(performance.now() - started),
          },
          "sweeper pass",
        );
      }
      return report;
    },
    onReport(tenant, report) {
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
      for (const step of report.undone ?? []) {
        options.logger.info(
          { tenant, idempotency_key: step.key, step_id: step.stepId, tool: step.tool, outcome: step.outcome },
          "sweeper undid an effect that settled after its run was aborted (rule 13)",
        );
      }
      if (report.left.length > 0) {
        options.logger.info(
          { tenant, left: report.left.length, idempotency_keys: report.left.slice(0, 20) },
          "sweeper left records for a later pass: their turn came with less than half of the pass's lease left",
        );
      }
    },
    onError(error, tenant) {
      if (tenant === null) options.logger.error({ err: error }, "sweeper pass failed: could not list the tenants");
      else options.logger.error({ err: error, tenant }, "sweeper pass failed");
    },
  });
}
