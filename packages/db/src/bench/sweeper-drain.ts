/**
 * The sweeper's drain rate: a crash leaves `records` PENDING records past their lease (the sends
 * landed), and the sweeper settles them with an instant key probe that finds each effect
 * (PENDING → UNKNOWN → SUCCEEDED `found`). Measures passes of `sweepStale` back to back, and the
 * service's adaptive loop, on one store.
 */
import {
  type AnyTool,
  canon,
  createExecutor,
  Deadline,
  defineTool,
  type IntentStore,
  startSweepLoop,
  sweepStale,
} from "@tristate/core";
import pg from "pg";
import { parseIntoClientConfig } from "pg-connection-string";
import { z } from "zod";
import type { PrismaIntentStore } from "../prisma-intent-store.ts";
import { type LatencyFigures, latency } from "./harness.ts";

/** The service's sweeper settings (TRISTATE_SWEEP_LIMIT's and TRISTATE_SWEEP_LANES' defaults, `startSweeper`'s concurrency). */
export const SERVICE_LIMIT = 1000;
export const SERVICE_CONCURRENCY = 64;
export const SERVICE_LANES = 2;

/** A drain's figures: records settled per second of wall time. */
export interface DrainFigures {
  label: string;
  records: number;
  /** Records that ended SUCCEEDED (all of them, or the bench throws). */
  settled: number;
  seconds: number;
  perSecond: number;
  passes: number;
  limit: number;
  concurrency: number;
}

/** The swept tool: the benchmarked charge, whose key probe finds the effect at once. */
export function foundTool(): AnyTool {
  return defineTool({
    name: "create_charge",
    kind: "idempotent_by_key",
    args: z.object({ order_id: z.string(), amount: z.number() }),
    identity: { order_id: canon.upper, amount: canon.decimal(2) },
    timeoutMs: 5_000,
    async invoke() {
      throw new Error("the drain bench never sends");
    },
    async probe(_args, ctx) {
      return { id: `ch_${ctx.clientRef}`, status: "succeeded" };
    },
  });
}

/**
 * Inserts `n` stale PENDING records of run `runId` (lease passed a minute ago) in one statement.
 * @throws pg errors when the database fails.
 */
export async function seedStale(pool: pg.Pool, runId: string, n: number, tenant = "default"): Promise<void> {
  await pool.query(
    `INSERT INTO intent_records (tenant, key, run_id, step_id, tool, args, identity, status, attempt, lease_until_at,
       recheck_at, needs_human, reconcile_sweeps, version, created_at, updated_at)
     SELECT $1, $2 || '-' || g, $2, 's-' || g, 'create_charge', jsonb_build_object('order_id', 'A-' || g, 'amount', 10),
       jsonb_build_object('order_id', 'A-' || g, 'amount', '10.00'), 'PENDING', 1, now() - interval '1 minute',
       now() - interval '1 minute', false, 0, 1, now() - interval '2 minutes', now() - interval '2 minutes'
     FROM generate_series(1, $3::int) g`,
    [tenant, runId, n],
  );
  // As autovacuum would after a bulk change (the test server runs with autovacuum off): plans of
  // the sweeper's statements see the backlog, and the dead rows of earlier phases (every call and
  // every drain updates each record two or three times) are gone — without it each drain ran slower
  // than the one before (1,769 → 875 records/s over six drains of 10,000 on one database).
  await pool.query("VACUUM ANALYZE intent_records, intent_events");
}

async function settledCount(pool: pg.Pool, runId: string): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(
    "SELECT count(*) AS n FROM intent_records WHERE tenant = 'default' AND run_id = $1 AND status = 'SUCCEEDED'",
    [runId],
  );
  return Number(rows[0]!.n);
}

/**
 * Seeds `records` stale records and drains them with `workers` sweepers each running passes of
 * `sweepStale({ limit, concurrency })` until one takes nothing.
 * @throws when a record is left unsettled.
 */
export async function measurePassDrain(
  store: IntentStore,
  pool: pg.Pool,
  options: { label: string; records: number; limit: number; concurrency: number; workers: number },
): Promise<DrainFigures> {
  const runId = `drain-${process.pid}-${Date.now()}`;
  await seedStale(pool, runId, options.records);
  const executor = createExecutor({ store, tools: [foundTool()] });
  let passes = 0;
  const t = performance.now();
  await Promise.all(
    Array.from({ length: options.workers }, async () => {
      for (;;) {
        const report = await sweepStale({ store, executor, limit: options.limit, concurrency: options.concurrency });
        passes++;
        if (report.taken === 0) return;
      }
    }),
  );
  const seconds = (performance.now() - t) / 1000;
  return finish(pool, runId, options, seconds, passes);
}

/**
 * Seeds `records` stale records and starts the service's adaptive loop (`startSweepLoop`, its
 * back-off up to 1 s, {@link SERVICE_LANES} lanes); the drain time runs from the start until its passes report every record
 * settled (then checked in the database).
 * @throws when the records are not settled within 10 minutes.
 */
export async function measureLoopDrain(
  store: IntentStore,
  pool: pg.Pool,
  options: { label: string; records: number; limit: number; concurrency: number },
): Promise<DrainFigures> {
  const runId = `loop-${process.pid}-${Date.now()}`;
  await seedStale(pool, runId, options.records);
  const executor = createExecutor({ store, tools: [foundTool()] });
  let passes = 0;
  let settled = 0;
  let done!: () => void;
  const drained = new Promise<void>((resolve) => {
    done = resolve;
  });
  const t = performance.now();
  const loop = startSweepLoop({
    tenants: async () => ["default"],
    idleMs: 1_000,
    lanes: SERVICE_LANES,
    pass: async () => {
      passes++;
      const report = await sweepStale({ store, executor, limit: options.limit, concurrency: options.concurrency });
      // Counted from the passes' own reports (no polling query beside the loop); checked in the database after.
      settled += report.results.filter((r) => r.envelope?.status === "SUCCEEDED").length;
      if (settled >= options.records) done();
      return report;
    },
    onError: (error) => console.error("sweep loop:", error),
  });
  const timeout = setTimeout(done, 600_000);
  try {
    await drained;
  } finally {
    clearTimeout(timeout);
    await loop.stop();
  }
  const seconds = (performance.now() - t) / 1000;
  return finish(pool, runId, options, seconds, passes);
}

async function finish(
  pool: pg.Pool,
  runId: string,
  options: { label: string; records: number; limit: number; concurrency: number },
  seconds: number,
  passes: number,
): Promise<DrainFigures> {
  const settled = await settledCount(pool, runId);
  if (settled !== options.records) throw new Error(`bench: ${settled} of ${options.records} records settled`);
  const { label, records, limit, concurrency } = options;
  return { label, records, settled, seconds, perSecond: records / seconds, passes, limit, concurrency };
}

/** The sweeper's figures in `pnpm bench:core`. */
export interface SweeperFigures {
  /** `sweepStale` with its defaults (limit 50, concurrency 8), passes back to back. */
  defaults: DrainFigures;
  /** `sweepStale` with the service's settings (limit 1000, concurrency 64), passes back to back. */
  tuned: DrainFigures;
  /** The service's adaptive loop (`startSweepLoop`, the service's settings) from start to the last record settled. */
  loop: DrainFigures;
  /** `executor.call` one at a time while the loop drains (its sequential latency under the sweeper's load). */
  hotPathDuringLoop: LatencyFigures;
}

/**
 * The sweeper's drain rates on `store` (a migrated database at `url`): the defaults on a quarter of
 * `records`, the service's settings on `records`, then the adaptive loop on `records` while calls of
 * `tool` run one at a time beside it.
 */
export async function measureSweeper(
  store: PrismaIntentStore,
  url: string,
  tool: AnyTool,
  records: number,
): Promise<SweeperFigures> {
  const pool = new pg.Pool({ ...parseIntoClientConfig(url), max: 4 });
  pool.on("error", () => {}); // an idle client's error only drops that client
  try {
    const defaults = await measurePassDrain(store, pool, {
      label: "sweepStale, defaults",
      records: Math.ceil(records / 4),
      limit: 50,
      concurrency: 8,
      workers: 1,
    });
    const tuned = await measurePassDrain(store, pool, {
      label: "sweepStale, service settings",
      records,
      limit: SERVICE_LIMIT,
      concurrency: SERVICE_CONCURRENCY,
      workers: 1,
    });
    const executor = createExecutor({ store, tools: [tool] });
    const samples: number[] = [];
    let draining = true;
    const calls = (async () => {
      for (let i = 0; draining; i++) {
        const t = performance.now();
        await executor.call({
          runId: `during-${process.pid}`,
          stepId: `s-${i}`,
          tool: tool.name,
          args: { order_id: `d-${i}`, amount: 10 },
          deadline: Deadline.after(60_000),
        });
        samples.push(performance.now() - t);
      }
    })();
    let loop: DrainFigures;
    try {
      loop = await measureLoopDrain(store, pool, {
        label: "service loop",
        records,
        limit: SERVICE_LIMIT,
        concurrency: SERVICE_CONCURRENCY,
      });
    } finally {
      draining = false;
      await calls;
    }
    return { defaults, tuned, loop, hotPathDuringLoop: latency(samples) };
  } finally {
    await pool.end();
  }
}
