import { toolKindPolicy } from "@tristate/core";
import { z } from "zod";
import { AppError } from "../../app-error.ts";
import { viewerProcedure } from "../../trpc/init.ts";
import { readTenant, tenantInput } from "../tenancy.ts";

/** Longest window of `stats.overview`, ms (400 days). */
export const MAX_STATS_WINDOW_MS = 400 * 24 * 3600_000;

const epochMs = z.number().int("must be an integer (epoch milliseconds)").min(0).max(8.64e15);

/** Input of `stats.overview`: the window `[fromEpochMs, toEpochMs)`, epoch ms. */
export const statsOverviewInput = z
  .object({
    /** Start of the window (inclusive), epoch ms. */
    fromEpochMs: epochMs,
    /** End of the window (exclusive), epoch ms; after fromEpochMs, at most 400 days later. */
    toEpochMs: epochMs,
    /** Sparkline slices over the window. @default 20 */
    buckets: z.number().int().min(1).max(200).optional(),
    /** Admin keys: only this tenant's (default: every tenant). Other keys always see their own tenant. */
    tenant: tenantInput,
  })
  .strict();

const breakdown = z.object({
  found: z.number(),
  absent_resent: z.number(),
  human_confirmed_effect: z.number(),
  human_confirmed_no_effect: z.number(),
  human_resent: z.number(),
  /** Not settled yet (UNKNOWN, a resend in flight, or waiting for a person). */
  open: z.number(),
  /** Settled without a resolution (e.g. a resend the remote refused). */
  other: z.number(),
});

/** Counts are exact at read time (rollups for whole buckets, raw rows for the rest; issue 14). */
const reliability = z.object({
  calls: z.number(),
  unknownCount: z.number(),
  /** 0–1. */
  unknownShare: z.number(),
  resolutions: breakdown,
  compensationsRun: z.number(),
  compensationsFailed: z.number(),
  stalePendingCount: z.number(),
  /** ms past its deadline of the oldest stale PENDING record, or null. */
  oldestStalePendingAgeMs: z.number().nullable(),
  /**
   * Send latency of the window's records (their outcome events' durations), ms. `samples` is exact;
   * the percentiles are exact when the window holds no rollup bucket, otherwise read from the
   * rollups' histogram: within 4.4 % of the nearest-rank percentile of the samples (issue 14).
   */
  latency: z.object({
    samples: z.number(),
    p50Ms: z.number().nullable(),
    p95Ms: z.number().nullable(),
    p99Ms: z.number().nullable(),
  }),
  sparkline: z.array(
    z.object({
      startEpochMs: z.number(),
      endEpochMs: z.number(),
      calls: z.number(),
      unknownCount: z.number(),
      unknownShare: z.number().nullable(),
    }),
  ),
  /** The period of the same length just before the window. */
  previous: z.object({
    fromEpochMs: z.number(),
    toEpochMs: z.number(),
    calls: z.number(),
    unknownCount: z.number(),
    unknownShare: z.number().nullable(),
  }),
  unknownShareChange: z.number().nullable(),
});

/** Output of `stats.overview`. */
export const statsOverviewOutput = z.object({
  fromEpochMs: z.number(),
  toEpochMs: z.number(),
  bucketMs: z.number(),
  staleNowEpochMs: z.number(),
  tools: z.array(
    reliability.extend({
      tool: z.string(),
      /** The catalog's timeout, ms (null: not in the catalog any more). */
      timeoutMs: z.number().nullable(),
      /** p99 ≥ 0.8 × timeout. */
      timeoutNearLatency: z.boolean(),
    }),
  ),
  totals: reliability,
});

/**
 * `stats.overview({ fromEpochMs, toEpochMs, buckets? })` → reliability per side-effecting tool of the
 * catalog (and any tool with records) for records created in the window: calls, UNKNOWN count and share with a
 * sparkline and the previous period, resolution mix, compensations, stale PENDING (now, whatever
 * the window), latency p50/p95/p99 against the catalog timeout; and totals.
 * @throws AppError BAD_INPUT naming `toEpochMs` when it is not after `fromEpochMs`, or `fromEpochMs`
 * when the window is longer than 400 days.
 */
export const statsOverviewProcedure = viewerProcedure
  .input(statsOverviewInput)
  .output(statsOverviewOutput)
  .query(async ({ ctx, input }) => {
    if (input.toEpochMs <= input.fromEpochMs) {
      throw new AppError("BAD_INPUT", "toEpochMs must be after fromEpochMs", { field: "toEpochMs" });
    }
    if (input.toEpochMs - input.fromEpochMs > MAX_STATS_WINDOW_MS) {
      throw new AppError("BAD_INPUT", "fromEpochMs: the window may be at most 400 days long", {
        field: "fromEpochMs",
      });
    }
    // Read-only tools write no intent records: they would only add rows of zeros.
    const toolTimeoutsMs = Object.fromEntries(
      [...ctx.services.executor.tools.values()]
        .filter((tool) => toolKindPolicy(tool.kind).hasEffect)
        .map((tool) => [tool.name, tool.timeoutMs]),
    );
    return ctx.services.db.reads(readTenant(ctx, input.tenant)).statsOverview({
      fromEpochMs: input.fromEpochMs,
      toEpochMs: input.toEpochMs,
      staleNowEpochMs: ctx.services.now(),
      toolTimeoutsMs,
      ...(input.buckets !== undefined ? { buckets: input.buckets } : {}),
    });
  });
