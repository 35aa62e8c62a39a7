import type { PrismaClient } from "../generated/prisma/client.ts";
import { archiveIntents } from "./archive-intents.ts";
import { refreshIntentRollups } from "./refresh-rollups.ts";

/** Options of {@link startReadModelLoop}. */
export interface ReadModelLoopOptions {
  /** Wait between rounds, ms (a round refreshes the rollups, then archives). @default 5_000 */
  intervalMs?: number;
  /**
   * Records older than this (ms before now) are archived; null: never (the default). Set it to the
   * catalog's longest key retention + the retention period.
   */
  archiveAfterMs?: number | null;
  /** Called with any error of a round (the loop goes on). */
  onError?: (error: unknown, step: "refresh" | "archive") => void;
}

/** A running loop: `stop()` ends it after the current round. */
export interface ReadModelLoop {
  stop(): Promise<void>;
}

/**
 * The read side's background step, one per replica (replicas take turns on an advisory lock): every
 * `intervalMs`, refresh the per-tool rollups (catching up in steps after a pause) and, when
 * `archiveAfterMs` is set, move settled records past retention to the archive. Never on a call's path.
 */
export function startReadModelLoop(prisma: PrismaClient, options: ReadModelLoopOptions = {}): ReadModelLoop {
  const intervalMs = options.intervalMs ?? 5_000;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  const round = async () => {
    try {
      for (let steps = 0; steps < 50 && !stopped; steps++) {
        if ((await refreshIntentRollups(prisma)).caughtUp) break;
      }
    } catch (error) {
      options.onError?.(error, "refresh");
    }
    if (options.archiveAfterMs == null || stopped) return;
    try {
      const olderThanEpochMs = await archiveCutEpochMs(prisma, options.archiveAfterMs);
      for (let steps = 0; steps < 20 && !stopped; steps++) {
        if (!(await archiveIntents(prisma, { olderThanEpochMs })).more) break;
      }
    } catch (error) {
      options.onError?.(error, "archive");
    }
  };
  const done = (async () => {
    while (!stopped) {
      await round();
      if (stopped) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, intervalMs);
        timer.unref?.();
      });
    }
  })();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      wake?.();
      await done;
    },
  };
}

/**
 * The archive's cut: the database's clock (`clock_timestamp()`) less `archiveAfterMs`, epoch ms.
 * Records are stamped by the database's clock, so their age is judged by it, never by a replica's
 * (rule 9; issue 21 §6): a replica whose clock runs ahead would otherwise archive records early.
 * @throws whatever the database throws.
 */
export async function archiveCutEpochMs(prisma: PrismaClient, archiveAfterMs: number): Promise<number> {
  const [row] = await prisma.$queryRaw<{ now: Date }[]>`SELECT clock_timestamp() AS now`;
  if (!row) throw new Error("the database returned no clock_timestamp()");
  return row.now.getTime() - archiveAfterMs;
}
