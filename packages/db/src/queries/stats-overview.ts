import { z } from "zod";
import type { PrismaClient } from "../generated/prisma/client.ts";
import {
  addHistogram,
  HIST_RELATIVE_ERROR,
  histogramPercentile,
  type LatencyHistogram,
  SEAL_MARGIN_MS,
} from "../rollups/buckets.ts";
import { tenantsOf } from "../rollups/record-sources.ts";
import type { TenantScope } from "./intent-view.ts";
import { epochMsSchema, parseQueryInput } from "./query-input.ts";
import {
  type CountRow,
  countsSql,
  type ExactLatencyRow,
  exactLatencySql,
  type HistRow,
  histogramSql,
  sliceSegments,
  staleSql,
  WATERMARK_SQL,
  windowSegments,
} from "./stats-overview-sql.ts";

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

/**
 * Latency of the sends of the window's records (the `outcome` events with `data.durationMs` of records
 * created in the window), ms; null without samples. Exact (`percentile_cont`) when the window holds no
 * rollup bucket; otherwise the nearest-rank percentile's histogram bucket (its geometric middle), within
 * {@link HIST_RELATIVE_ERROR} (≈ 4.4 %) of the samples' nearest-rank percentile.
 */
export interface LatencyStats {
  /** Sends with a duration of the window's records (exact). */
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
const CATEGORIES: Category[] = [
  "found",
  "absent_resent",
  "human_confirmed_effect",
  "human_confirmed_no_effect",
  "human_resent",
  "open",
  "other",
];

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
  hist: LatencyHistogram;
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
 * (deadline before `staleNowEpochMs`, whatever the window).
 *
 * How (issue 14): whole 1-min/10-min/hour/6-h/day buckets before the rollups' sealed horizon (the
 * last refresh − {@link SEAL_MARGIN_MS}, to the ms; the horizon's own minute row holds only the records
 * before it) come from `intent_rollups`, compensations included; sub-minute edges and records after the
 * horizon from the records (by the (tenant, created_at, key) index); a minute in the dirty queue (an
 * older record, or a compensation's record, changed since the refresh) has its rollup row replaced by
 * its records. Counts are therefore exact at read time (for writes in transactions shorter than 10 s).
 * Latency: exact (`percentile_cont`) when the window holds no rollup bucket (e.g. the rollups were
 * never refreshed); otherwise nearest-rank percentiles from the histogram, each within
 * {@link HIST_RELATIVE_ERROR} (≈ 4.4 %) of the samples' nearest-rank percentile; `samples` is always
 * exact. Stale PENDING is read from its partial index. Cost: independent of the table's size.
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
  const [tenants, watermark] = await Promise.all([
    tenantsOf(prisma, options.tenant),
    prisma.$queryRaw<{ ms: number }[]>(WATERMARK_SQL),
  ]);
  const refreshedMs = watermark[0]?.ms ?? 0;
  // The rollups hold exactly the records created before the cut (to the ms, the cut's minute row too).
  const sealedMs = refreshedMs > 0 ? refreshedMs - SEAL_MARGIN_MS : 0;
  const segments = sliceSegments(fromEpochMs, toEpochMs, buckets, prevFromEpochMs, sealedMs);
  const usesRollups = segments.some((s) => s.slice >= 0 && s.levelMs > 0);

  const [counts, stale, hist, exact] = await Promise.all([
    prisma.$queryRaw<CountRow[]>(countsSql(tenants, segments)),
    prisma.$queryRaw<{ tool: string; n: number; oldest: Date }[]>(staleSql(tenants, staleNowEpochMs)),
    usesRollups
      ? prisma.$queryRaw<HistRow[]>(histogramSql(tenants, windowSegments(fromEpochMs, toEpochMs, sealedMs)))
      : Promise.resolve([]),
    usesRollups ? Promise.resolve([]) : prisma.$queryRaw<ExactLatencyRow[]>(exactLatencySql(tenants, segments)),
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
    hist: new Map(),
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
    // A tool whose rows cancel out (a dirty minute emptied by archiving) adds nothing.
    if (row.calls === 0 && !perTool.has(row.tool)) continue;
    for (const acc of [accOf(row.tool), totals]) {
      if (row.slice < 0) {
        acc.prevCalls += row.calls;
        acc.prevUnknown += row.unknown;
        continue;
      }
      acc.calls += row.calls;
      acc.bucketCalls[row.slice]! += row.calls;
      acc.unknown += row.unknown;
      acc.bucketUnknown[row.slice]! += row.unknown;
      for (const category of CATEGORIES) acc.resolutions[category] += row[category];
      acc.compensationsRun += row.compensations_run;
      acc.compensationsFailed += row.compensations_failed;
    }
  }
  for (const row of stale) {
    const oldest = row.oldest.getTime();
    for (const acc of [accOf(row.tool), totals]) {
      acc.staleCount += row.n;
      acc.oldestDeadline = acc.oldestDeadline === null ? oldest : Math.min(acc.oldestDeadline, oldest);
    }
  }
  for (const row of exact) {
    const stats: LatencyStats = { samples: row.samples, p50Ms: row.p50, p95Ms: row.p95, p99Ms: row.p99 };
    if (row.tool === null) totals.latency = stats;
    else accOf(row.tool).latency = stats;
  }
  for (const row of hist) {
    for (const acc of [accOf(row.tool), totals]) {
      if (row.hist) addHistogram(acc.hist, row.hist, row.n);
      else addHistogram(acc.hist, new Map([[row.k!, row.n]]));
    }
  }
  if (usesRollups) {
    for (const acc of [...perTool.values(), totals]) {
      let samples = 0;
      for (const n of acc.hist.values()) samples += n;
      acc.latency = {
        samples,
        p50Ms: histogramPercentile(acc.hist, 0.5),
        p95Ms: histogramPercentile(acc.hist, 0.95),
        p99Ms: histogramPercentile(acc.hist, 0.99),
      };
    }
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
