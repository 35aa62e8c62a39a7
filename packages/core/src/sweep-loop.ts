import type { SweepReport } from "./sweeper.ts";

/** Options of {@link startSweepLoop}. */
export interface SweepLoopOptions {
  /** The tenants a round visits, in turn (read again every round). */
  tenants: () => Promise<string[]>;
  /**
   * One pass for one tenant (normally `sweepStale` with that tenant's store and executor, its
   * `onClaimed` given `claimed`): calling `claimed(n)` as soon as it has taken `n` records lets the
   * other lanes start while it is still reconciling them.
   */
  pass: (tenant: string, claimed: (taken: number) => void) => Promise<SweepReport>;
  /** Longest wait between rounds that found nothing, ms; 0 or less: no loop at all. @default 5000 */
  idleMs?: number;
  /** First wait after a round that found nothing, ms; doubles up to `idleMs` while rounds stay empty. @default 50 */
  minIdleMs?: number;
  /**
   * Rounds run at once while there is a backlog (an integer ≥ 1). As soon as a pass has taken
   * records (its `claimed`), or after a round that took some, extra lanes start (up to `lanes − 1`),
   * each running rounds back to back until one takes nothing;
   * an idle loop polls with one lane only. Passes of one tenant in two lanes take different records
   * (`claimStale` skips locked rows and leases what it takes, and a pass starts no record with less
   * than half of its lease left, so none is taken again while it is reconciled). @default 1
   */
  lanes?: number;
  /** Called with each pass's report (logging). */
  onReport?: (tenant: string, report: SweepReport) => void;
  /** Called when listing the tenants, a pass or `onReport` throws (the loop goes on, also when this throws). */
  onError?: (error: unknown, tenant: string | null) => void;
}

/** A running sweep loop: `stop()` ends it after the pass in progress. */
export interface SweepLoop {
  /** Resolves when the pass in progress (if any) has finished. */
  stop(): Promise<void>;
}

/**
 * The service's adaptive sweeper: rounds of passes, one pass per tenant in turn. While a round takes
 * records, the next starts at once (a backlog drains at the rate passes run), and up to `lanes − 1`
 * more rounds run beside it until they find nothing; after a round that takes
 * nothing it waits `minIdleMs`, doubling while rounds stay empty, up to `idleMs`. Several replicas may
 * run it on one database: `claimStale` locks with `FOR UPDATE SKIP LOCKED` and leases what it takes,
 * so each record is reconciled by one replica, and a record left UNKNOWN waits for its new lease (no spin).
 */
export function startSweepLoop(options: SweepLoopOptions): SweepLoop {
  const idleMs = options.idleMs ?? 5_000;
  const minIdleMs = Math.min(options.minIdleMs ?? 50, Math.max(idleMs, 1));
  const lanes = options.lanes ?? 1;
  if (!Number.isInteger(lanes) || lanes < 1) throw new TypeError("startSweepLoop: lanes must be an integer ≥ 1");
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let waitMs = 0;
  /** The extra lanes running (each ends at its first round that takes nothing). */
  const extra = new Set<Promise<void>>();

  /** Starts extra lanes (a backlog): each runs rounds back to back until one takes nothing. */
  const widen = () => {
    while (!stopped && extra.size < lanes - 1) {
      const lane: Promise<void> = (async () => {
        while (!stopped && (await round()) > 0) {}
      })().finally(() => extra.delete(lane));
      extra.add(lane);
    }
  };
  /** Reports an error; a hook that throws (a broken logger) must not end the loop. */
  const reportError = (error: unknown, tenant: string | null) => {
    try {
      options.onError?.(error, tenant);
    } catch {}
  };
  /** One round over the tenants; resolves with the records taken. */
  const round = async (): Promise<number> => {
    let tenants: string[];
    try {
      tenants = await options.tenants();
    } catch (error) {
      reportError(error, null);
      return 0;
    }
    let taken = 0;
    for (const tenant of tenants) {
      if (stopped) break;
      let report: SweepReport;
      try {
        report = await options.pass(tenant, (n) => {
          if (n > 0) widen();
        });
      } catch (error) {
        reportError(error, tenant);
        continue;
      }
      taken += report.taken;
      try {
        options.onReport?.(tenant, report);
      } catch (error) {
        reportError(error, tenant);
      }
    }
    return taken;
  };
  const schedule = (ms: number) => {
    if (stopped) return;
    timer = setTimeout(() => {
      timer = null;
      running = round().then((taken) => {
        running = null;
        if (taken > 0) widen();
        waitMs = taken > 0 ? 0 : Math.min(idleMs, Math.max(minIdleMs, waitMs * 2));
        schedule(waitMs);
      });
    }, ms);
    timer.unref();
  };
  if (idleMs > 0) schedule(minIdleMs);
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await Promise.all([running, ...extra]);
    },
  };
}
