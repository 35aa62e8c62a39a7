import { z } from "zod";
import { Prisma, type PrismaClient } from "../generated/prisma/client.ts";
import type { TenantScope } from "./intent-view.ts";
import { epochMsSchema, parseQueryInput } from "./query-input.ts";

/** Default number of sparkline buckets over the window. */
export const DEFAULT_SPARKLINE_BUCKETS = 20;
/** `timeoutNearLatency` is set when the observed p99 latency reaches this fraction of the tool's timeout. */
export const TIMEOUT_NEAR_LATENCY_RATIO = 0.8;

/** Input of {@link statsOverview}. */
export const statsOverviewInput = z
  .object({
    /** Start of the window (inclusive), epoch ms: records created at or after it. */
    fromEpochMs: epochMsSchema,
    /** End of the window (exclusive), epoch ms. */
    toEpochMs: epochMsSchema,
    /** "Now" for stale PENDING records (deadline before it, whatever the window), epoch ms. */
    staleNowEpochMs: epochMsSchema,
    /** Each catalog tool's timeout, ms (from the service's catalog); catalog tools appear even without calls. */
    toolTimeoutsMs: z.record(z.string(), z.number().positive()).default({}),
    /** Sparkline buckets: equal slices of the window. @default 20 */
    buckets: z.number().int().min(1).max(200).default(DEFAULT_SPARKLINE_BUCKETS),
  })
  .refine((v) => v.fromEpochMs < v.toEpochMs, { message: "must be after fromEpochMs", path: ["toEpochMs"] });

/**
 * How the UNKNOWNs of the window ended. The fields sum to `unknownCount`.
 * - the five resolutions: settled that way;
 * - `open`: not settled yet (status UNKNOWN or PENDING again — e.g. a resend in flight — or waiting for a person);
 * - `other`: settled without a resolution (e.g. a resend the remote refused: FAILED_NO_EFFECT).
 */
export interface ResolutionBreakdown {
  found: number;
  absent_resent: number;
  human_confirmed_effect: number;
  human_confirmed_no_effect: number;
  human_resent: number;
  open: number;
  other: number;
}

/** Latency of sends (the `outcome` events' `data.durationMs` in the window), ms; null without samples. */
export interface LatencyStats {
  /** Outcome events with a duration in the window. */
  samples: number;
  p50Ms: number | null;
  p95Ms: number | null;
  p99Ms: number | null;
}

/** One slice of the window. */
export interface SparklinePoint {
  /** Epoch ms (inclusive). */
  startEpochMs: number;
  /** Epoch ms (exclusive). */
  endEpochMs: number;
  calls: number;
  unknownCount: number;
  /** unknownCount / calls, or null when the slice has no calls. */
  unknownShare: number | null;
}

/** UNKNOWN share of a period (the previous one: same length, just before the window). */
export interface PeriodShare {
  /** Epoch ms (inclusive). */
  fromEpochMs: number;
  /** Epoch ms (exclusive). */
  toEpochMs: number;
  calls: number;
  unknownCount: number;
  /** 0–1, or null when the period has no calls. */
  unknownShare: number | null;
}

/** Reliability figures of one tool (or of all tools: {@link StatsOverview.totals}). */
export interface ReliabilityStats {
  /** Intent records created in the window. */
  calls: number;
  /**
   * Records of the window that were ever UNKNOWN: status UNKNOWN, a resolution, an `outcome` event
   * with outcome UNKNOWN, or a `lease_expired` event.
   */
  unknownCount: number;
  /** unknownCount / calls, 0–1 (0 without calls). */
  unknownShare: number;
  resolutions: ResolutionBreakdown;
  /** Compensations executed for records of the window (compensations and correctives; a record's `compensation.key` names its call). */
  compensationsRun: number;
  /** Of those, the ones that failed (compensations and correctives; a record's `compensation.key` names its call). */
  compensationsFailed: number;
  /** PENDING records whose deadline is before `staleNowEpochMs`, whatever the window. */
  stalePendingCount: number;
  /** How long the oldest stale PENDING record is past its deadline, ms; null when none. */
  oldestStalePendingAgeMs: number | null;
  latency: LatencyStats;
  /** UNKNOWN share per equal slice of the window, oldest first. */
  sparkline: SparklinePoint[];
  previous: PeriodShare;
  /** unknownShare − previous.unknownShare (−1…1), or null when either period had no calls. */
  unknownShareChange: number | null;
}

/** One tool's row of the overview. */
export interface ToolStats extends ReliabilityStats {
  tool: string;
  /** The tool's timeout from the catalog, ms; null when the tool is no longer in the catalog. */
  timeoutMs: number | null;
  /** True when p99 latency ≥ {@link TIMEOUT_NEAR_LATENCY_RATIO} × timeout (the usual cause of a rising UNKNOWN rate). */
  timeoutNearLatency: boolean;
}

/** Result of {@link statsOverview}. */
export interface StatsOverview {
  /** Epoch ms (inclusive). */
  fromEpochMs: number;
  /** Epoch ms (exclusive). */
  toEpochMs: number;
  /** Width of one sparkline slice, ms (may be fractional). */
  bucketMs: number;
  /** The "now" used for stale PENDING records, epoch ms. */
  staleNowEpochMs: number;
  /** One row per tool (catalog tools and tools with data), by name. */
  tools: ToolStats[];
  /** All tools together. */
  totals: ReliabilityStats;
}

type Category = keyof ResolutionBreakdown;

interface CountRow {
  tool: string;
  bucket: number;
  ever_unknown: boolean;
  category: Category;
  n: number;
}

interface CompensationRow {
  tool: string;
  run: number;
  failed: number;
}

interface StaleRow {
  tool: string;
  n: number;
  oldest: Date;
}

interface LatencyRow {
  tool: string | null;
  samples: number;
  p50: number | null;
  p95: number | null;
  p99: number | null;
}

interface Acc {
  calls: number;
  unknown: number;
  resolutions: ResolutionBreakdown;
  bucketCalls: number[];
  bucketUnknown: number[];
  prevCalls: number;
  prevUnknown: number;
  staleCount: number;
  compensationsRun: number;
  compensationsFailed: number;
  oldestDeadline: number | null;
  latency: LatencyStats;
}

const emptyBreakdown = (): ResolutionBreakdown => ({
  found: 0,
  absent_resent: 0,
  human_confirmed_effect: 0,
  human_confirmed_no_effect: 0,
  human_resent: 0,
  open: 0,
  other: 0,
});

const noLatency = (): LatencyStats => ({ samples: 0, p50Ms: null, p95Ms: null, p99Ms: null });

/**
 * The operators' overview: per tool, for records created in `[fromEpochMs, toEpochMs)` — calls, UNKNOWN
 * count and share, how the UNKNOWNs ended, compensations, send latency p50/p95/p99 against the tool's
 * timeout, a sparkline of the UNKNOWN share and the previous period's share; plus stale PENDING records
 * (deadline before `staleNowEpochMs`, whatever the window). Three aggregate SQL statements, run together.
 * @param options.tenant - only this tenant's records (`TenantScope`); absent: every tenant's.
 * @throws QueryInputError naming the field when the input is invalid (e.g. `toEpochMs` not after `fromEpochMs`).
 */
export async function statsOverview(
  prisma: PrismaClient,
  input: z.input<typeof statsOverviewInput>,
  options: TenantScope = {},
): Promise<StatsOverview> {
  const { fromEpochMs, toEpochMs, staleNowEpochMs, toolTimeoutsMs, buckets } = parseQueryInput(
    statsOverviewInput,
    input,
  );
  const windowMs = toEpochMs - fromEpochMs;
  const prevFromEpochMs = Math.max(0, fromEpochMs - windowMs);
  const from = new Date(fromEpochMs);
  const to = new Date(toEpochMs);
  // The tenant leads every filter (it leads every index); `r` is the alias of intent_records throughout.
  const tenantIs = options.tenant !== undefined ? Prisma.sql`r.tenant = ${options.tenant} AND` : Prisma.empty;

  // An UNKNOWN ever: the status now, a resolution, or the timeline (an UNKNOWN outcome, an expired lease).
  const countsQuery = prisma.$queryRaw<CountRow[]>(Prisma.sql`
    WITH r AS (
      SELECT r.tool, r.created_at,
        (r.status = 'UNKNOWN' OR r.resolution IS NOT NULL OR EXISTS (
          SELECT 1 FROM intent_events e
          WHERE e.tenant = r.tenant AND e.key = r.key
            AND (e.type = 'lease_expired' OR (e.type = 'outcome' AND e.data->>'outcome' = 'UNKNOWN'))
        )) AS ever_unknown,
        CASE
          WHEN r.status IN ('PENDING', 'UNKNOWN') OR r.resolution = 'needs_human' THEN 'open'
          WHEN r.resolution IS NOT NULL THEN r.resolution::text
          ELSE 'other'
        END AS category
      FROM intent_records r
      WHERE ${tenantIs} r.created_at >= ${new Date(prevFromEpochMs)}::timestamptz AND r.created_at < ${to}::timestamptz
    )
    SELECT tool,
      CASE WHEN created_at < ${from}::timestamptz THEN -1
        ELSE LEAST(${buckets - 1}::int, floor(
          (extract(epoch FROM created_at) * 1000 - ${fromEpochMs}::numeric) * ${buckets}::numeric / ${windowMs}::numeric
        )::int)
      END AS bucket,
      ever_unknown, category, count(*)::int AS n
    FROM r
    GROUP BY 1, 2, 3, 4`);

  const staleQuery = prisma.$queryRaw<StaleRow[]>(Prisma.sql`
    SELECT tool, count(*)::int AS n, min(deadline_at) AS oldest
    FROM intent_records r
    WHERE ${tenantIs} status = 'PENDING' AND deadline_at < ${new Date(staleNowEpochMs)}::timestamptz
    GROUP BY tool`);

  // Sends that ended in the window (a `found` outcome carries no duration: no send happened then).
  const latencyQuery = prisma.$queryRaw<LatencyRow[]>(Prisma.sql`
    SELECT r.tool, count(*)::int AS samples,
      percentile_cont(0.5) WITHIN GROUP (ORDER BY (e.data->>'durationMs')::float8) AS p50,
      percentile_cont(0.95) WITHIN GROUP (ORDER BY (e.data->>'durationMs')::float8) AS p95,
      percentile_cont(0.99) WITHIN GROUP (ORDER BY (e.data->>'durationMs')::float8) AS p99
    FROM intent_events e JOIN intent_records r ON r.tenant = e.tenant AND r.key = e.key
    WHERE ${tenantIs} e.type = 'outcome' AND e.at >= ${from}::timestamptz AND e.at < ${to}::timestamptz
      AND jsonb_typeof(e.data->'durationMs') = 'number'
    GROUP BY GROUPING SETS ((r.tool), ())`);

  // Compensations (and correctives) run for effects of the window. A failed one ended FAILED_NO_EFFECT,
  // waits for a person, or never got a record; one still being reconciled is not counted as failed.
  const compensationQuery = prisma.$queryRaw<CompensationRow[]>(Prisma.sql`
    SELECT r.tool,
      count(*)::int AS run,
      count(*) FILTER (WHERE c.key IS NULL OR c.status = 'FAILED_NO_EFFECT' OR c.needs_human)::int AS failed
    FROM intent_records r
    LEFT JOIN intent_records c ON c.tenant = r.tenant AND c.key = r.compensation->>'key'
    WHERE ${tenantIs} r.created_at >= ${from}::timestamptz AND r.created_at < ${to}::timestamptz
      AND r.compensation ? 'key'
    GROUP BY r.tool`);

  const [counts, stale, latency, compensations] = await Promise.all([
    countsQuery,
    staleQuery,
    latencyQuery,
    compensationQuery,
  ]);

  const newAcc = (): Acc => ({
    calls: 0,
    unknown: 0,
    resolutions: emptyBreakdown(),
    bucketCalls: new Array<number>(buckets).fill(0),
    bucketUnknown: new Array<number>(buckets).fill(0),
    prevCalls: 0,
    prevUnknown: 0,
    staleCount: 0,
    compensationsRun: 0,
    compensationsFailed: 0,
    oldestDeadline: null,
    latency: noLatency(),
  });
  const perTool = new Map<string, Acc>();
  for (const tool of Object.keys(toolTimeoutsMs)) perTool.set(tool, newAcc());
  const totals = newAcc();
  const accOf = (tool: string) => {
    const acc = perTool.get(tool) ?? newAcc();
    perTool.set(tool, acc);
    return acc;
  };

  for (const row of counts) {
    for (const acc of [accOf(row.tool), totals]) {
      if (row.bucket < 0) {
        acc.prevCalls += row.n;
        if (row.ever_unknown) acc.prevUnknown += row.n;
        continue;
      }
      acc.calls += row.n;
      acc.bucketCalls[row.bucket]! += row.n;
      if (row.ever_unknown) {
        acc.unknown += row.n;
        acc.bucketUnknown[row.bucket]! += row.n;
        acc.resolutions[row.category] += row.n;
      }
    }
  }
  for (const row of compensations) {
    for (const acc of [accOf(row.tool), totals]) {
      acc.compensationsRun += row.run;
      acc.compensationsFailed += row.failed;
    }
  }
  for (const row of stale) {
    const oldest = row.oldest.getTime();
    for (const acc of [accOf(row.tool), totals]) {
      acc.staleCount += row.n;
      acc.oldestDeadline = acc.oldestDeadline === null ? oldest : Math.min(acc.oldestDeadline, oldest);
    }
  }
  for (const row of latency) {
    const stats: LatencyStats = { samples: row.samples, p50Ms: row.p50, p95Ms: row.p95, p99Ms: row.p99 };
    if (row.tool === null) totals.latency = stats;
    else accOf(row.tool).latency = stats;
  }

  const bucketMs = windowMs / buckets;
  const share = (part: number, whole: number) => (whole > 0 ? part / whole : null);
  const finish = (acc: Acc): ReliabilityStats => {
    const previousShare = share(acc.prevUnknown, acc.prevCalls);
    const currentShare = share(acc.unknown, acc.calls);
    const unknownShare = currentShare ?? 0;
    return {
      calls: acc.calls,
      unknownCount: acc.unknown,
      unknownShare,
      resolutions: acc.resolutions,
      compensationsRun: acc.compensationsRun,
      compensationsFailed: acc.compensationsFailed,
      stalePendingCount: acc.staleCount,
      oldestStalePendingAgeMs: acc.oldestDeadline === null ? null : staleNowEpochMs - acc.oldestDeadline,
      latency: acc.latency,
      sparkline: acc.bucketCalls.map((calls, i) => ({
        // Slice i holds the integer times t with i ≤ (t − from) / bucketMs < i + 1.
        startEpochMs: fromEpochMs + Math.ceil((i * windowMs) / buckets),
        endEpochMs: i === buckets - 1 ? toEpochMs : fromEpochMs + Math.ceil(((i + 1) * windowMs) / buckets),
        calls,
        unknownCount: acc.bucketUnknown[i]!,
        unknownShare: share(acc.bucketUnknown[i]!, calls),
      })),
      previous: {
        fromEpochMs: prevFromEpochMs,
        toEpochMs: fromEpochMs,
        calls: acc.prevCalls,
        unknownCount: acc.prevUnknown,
        unknownShare: previousShare,
      },
      unknownShareChange: previousShare === null || currentShare === null ? null : currentShare - previousShare,
    };
  };

  const tools = [...perTool.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([tool, acc]): ToolStats => {
      const timeoutMs = toolTimeoutsMs[tool] ?? null;
      const p99 = acc.latency.p99Ms;
      return {
        tool,
        timeoutMs,
        timeoutNearLatency: timeoutMs !== null && p99 !== null && p99 >= TIMEOUT_NEAR_LATENCY_RATIO * timeoutMs,
        ...finish(acc),
      };
    });
  return { fromEpochMs, toEpochMs, bucketMs, staleNowEpochMs, tools, totals: finish(totals) };
}
