import { z } from "zod";
import { viewerProcedure } from "../../trpc/init.ts";
import { intentSummarySchema } from "../read-schemas.ts";
import { maskedRecord } from "../secrets.ts";
import { readTenant, tenantInput } from "../tenancy.ts";

/** Input of `stale.list`. */
export const listStaleInput = z
  .object({
    /** Most items, 1–500. @default 50 */
    limit: z.number().int().min(1).max(500).optional(),
    /** Admin keys: only this tenant's (default: every tenant). Other keys always see their own tenant. */
    tenant: tenantInput,
  })
  .strict();

/** Output of `stale.list`: oldest deadline first; `total` counts all stale PENDING records. */
export const listStaleOutput = z.object({
  items: z.array(intentSummarySchema.extend({ agePastDeadlineMs: z.number() })),
  total: z.number(),
});

/**
 * `stale.list({ limit? })` → PENDING records past their deadline now, with their age past it (ms);
 * secret argument values masked for every role but admin.
 */
export const staleListProcedure = viewerProcedure
  .input(listStaleInput.optional())
  .output(listStaleOutput)
  .query(async ({ ctx, input }) => {
    const list = await ctx.services.db.reads(readTenant(ctx, input?.tenant)).listStale({
      nowEpochMs: ctx.services.now(),
      ...(input?.limit !== undefined ? { limit: input.limit } : {}),
    });
    return { ...list, items: list.items.map((r) => maskedRecord(ctx, r)) };
  });
