import { z } from "zod";
import { viewerProcedure } from "../../trpc/init.ts";
import { readTenant, tenantInput } from "../tenancy.ts";

/** Input of `stats.attention` (optional). */
export const statsAttentionInput = z
  .object({
    /** Admin keys: only this tenant's (default: every tenant). Other keys always see their own tenant. */
    tenant: tenantInput,
  })
  .strict()
  .optional();

/** Output of `stats.attention`: what waits on someone now, whatever the overview's window. */
export const statsAttentionOutput = z.object({
  /** The human queue (`queue.list`). */
  needsHuman: z.object({
    /** Records waiting for a person. */
    count: z.number().int(),
    /** Creation of the oldest, epoch ms, or null when none waits. */
    oldestCreatedAtEpochMs: z.number().nullable(),
    /** Its age by the database's clock, ms, or null. */
    oldestAgeMs: z.number().nullable(),
  }),
  /** Stale PENDING records (`stale.list`): PENDING past their deadline, waiting for a sweeper. */
  stalePending: z.object({
    count: z.number().int(),
    /** How long ago the oldest one's deadline passed, ms, or null when none is stale. */
    oldestAgePastDeadlineMs: z.number().nullable(),
  }),
});

/**
 * `stats.attention({ tenant? })` (viewer) → the records waiting on someone now: the human queue's size
 * and its oldest record's age, and the stale PENDING records' count and the oldest one's age past its
 * deadline. Two index reads (the `needs_human` and live re-check partial indexes); no rows are fetched
 * beyond the oldest stale one, so the dashboard may ask it on every live refresh.
 */
export const statsAttentionProcedure = viewerProcedure
  .input(statsAttentionInput)
  .output(statsAttentionOutput)
  .query(async ({ ctx, input }) => {
    const reads = ctx.services.db.reads(readTenant(ctx, input?.tenant));
    const [needsHuman, stale] = await Promise.all([
      reads.needsHumanSummary(),
      reads.listStale({ nowEpochMs: ctx.services.now(), limit: 1 }),
    ]);
    return {
      needsHuman,
      stalePending: { count: stale.total, oldestAgePastDeadlineMs: stale.items[0]?.agePastDeadlineMs ?? null },
    };
  });
