import type { SweepReport } from "./sweeper.ts";

/** Options of {@link startSweepLoop}. */
export interface SweepLoopOptions {
  /** The tenants a round visits, in turn (read again every round). */
  tenants: () => Promise<string[]>;
  /** One pass for one tenant (normally `sweepStale` with that tenant's store and executor). */
  pass: (tenant: string) => Promise<SweepReport>;
  /** Longest wait between rounds that found nothing, ms; 0 or less: no loop at all. @default 5000 */
  idleMs?: number;
  /** First wait after a round that found nothing, ms; doubles up to `idleMs` while rounds stay empty. @default 50 */
  minIdleMs?: number;
  /** Called with each pass's report (logging). */
  onReport?: (tenant: string, report: SweepReport) => void;
  /** Called when listing the tenants or a pass throws (the loop goes on). */
  onError?: (error: unknown, tenant: string | null) => void;
}

/** A running sweep loop: `stop()` ends it after the pass in progress. */
export interface SweepLoop {
  /** Resolves when the pass in progress (if any) has finished. */
  stop(): Promise<void>;
}

/**
 * The service's adaptive sweeper: rounds of passes, one pass per tenant in turn. While a round takes
 * records, the next starts at once (a backlog drains at the rate passes run); after a round that takes
 * nothing it waits `minIdleMs`, doubling while rounds stay empty, up to `idleMs`. Several replicas may
 * run it on one database: `claimStale` locks with `FOR UPDATE SKIP LOCKED` and leases what it takes,
 * so each record is reconciled by one replica, and a record left UNKNOWN waits for its new lease (no spin).
 */
export function startSweepLoop(options: SweepLoopOptions): SweepLoop {
  const idleMs = options.idleMs ?? 5_000;
  const minIdleMs = Math.min(options.minIdleMs ?? 50, Math.max(idleMs, 1));
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let waitMs = 0;

  /** One round over the tenants; resolves with the records taken. */
  const round = async (): Promise<number> => {
    let tenants: string[];
    try {
      tenants = await options.tenants();
    } catch (error) {
      options.onError?.(error, null);
      return 0;
    }
    let taken = 0;
    for (const tenant of tenants) {
      if (stopped) break;
      try {
        const report = await options.pass(tenant);
        taken += report.taken;
        options.onReport?.(tenant, report);
      } catch (error) {
        options.onError?.(error, tenant);
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
      await running;
    },
  };
}
