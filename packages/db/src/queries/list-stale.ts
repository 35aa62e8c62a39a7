import { z } from "zod";
import { Prisma, type PrismaClient } from "../generated/prisma/client.ts";
import {
  type ArgsRedactor,
  type IntentSummary,
  type PrismaRecordRow,
  SUMMARY_COLUMNS_SQL,
  type TenantScope,
  toIntentSummary,
} from "./intent-view.ts";
import { epochMsSchema, parseQueryInput } from "./query-input.ts";

/** Input of {@link listStale}. */
export const listStaleInput = z.object({
  /** "Now", epoch ms: PENDING records with a deadline before it are stale. */
  nowEpochMs: epochMsSchema,
  /** Most items returned, 1–500. @default 50 */
  limit: z.number().int().min(1).max(500).default(50),
});

/** A stale PENDING record. */
export interface StaleIntent extends IntentSummary {
  /** How long ago its deadline passed, ms (> 0). */
  agePastDeadlineMs: number;
}

/** Result of {@link listStale}. */
export interface StaleList {
  /** Oldest deadline first (then key). */
  items: StaleIntent[];
  /** All stale PENDING records, also those beyond `limit`. */
  total: number;
}

/**
 * Stale PENDING records — PENDING with a deadline before `nowEpochMs` (orphans of crashed or lost
 * calls, waiting for a sweeper) — oldest deadline first, with their age past the deadline.
 * @param options.redact - rewrites each record's args (masking; issue 5), default none.
 * @param options.tenant - only this tenant's records ({@link TenantScope}).
 * @throws QueryInputError naming the field when the input is invalid.
 */
export async function listStale(
  prisma: PrismaClient,
  input: z.input<typeof listStaleInput>,
  options: { redact?: ArgsRedactor } & TenantScope = {},
): Promise<StaleList> {
  const { nowEpochMs, limit } = parseQueryInput(listStaleInput, input);
  // `status = 'PENDING'` as a literal: the planner proves the live-recheck partial index's predicate.
  // Past its lease = due for the sweeper: a PENDING record's re-check is its lease end, so the range
  // on `recheck_at` is the index's, and the lease is compared in it.
  const now = new Date(nowEpochMs);
  const where = Prisma.sql`${options.tenant !== undefined ? Prisma.sql`tenant = ${options.tenant} AND` : Prisma.empty}
    status = 'PENDING' AND recheck_at < ${now}::timestamptz AND lease_until_at < ${now}::timestamptz`;
  const [rows, counted] = await Promise.all([
    prisma.$queryRaw<PrismaRecordRow[]>(Prisma.sql`SELECT ${Prisma.raw(SUMMARY_COLUMNS_SQL)} FROM intent_records
      WHERE ${where} ORDER BY recheck_at, key LIMIT ${limit}::int`),
    prisma.$queryRaw<{ n: number }[]>(Prisma.sql`SELECT count(*)::int AS n FROM intent_records WHERE ${where}`),
  ]);
  const total = counted[0]?.n ?? 0;
  return {
    items: rows.map((row) => {
      const summary = toIntentSummary(row, options.redact);
      return { ...summary, agePastDeadlineMs: nowEpochMs - summary.leaseUntilEpochMs };
    }),
    total,
  };
}
