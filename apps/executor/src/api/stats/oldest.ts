import { z } from "zod";
import { viewerProcedure } from "../../trpc/init.ts";
import { readTenant, tenantInput } from "../tenancy.ts";

/** Input of `stats.oldest` (optional). */
export const statsOldestInput = z
  .object({
    /** Admin keys: only this tenant's (default: every tenant). Other keys always see their own tenant. */
    tenant: tenantInput,
  })
  .strict()
  .optional();

/** Output of `stats.oldest`. */
export const statsOldestOutput = z.object({
  /** Creation of the oldest record (live or archived), epoch ms, or null when there is none. */
  oldestCreatedAtEpochMs: z.number().nullable(),
});

/**
 * `stats.oldest({ tenant? })` (viewer) → when the oldest record was created: the dashboard's overview
 * opens on the smallest window that holds all the data of a young database. Two index probes per
 * tenant, whatever the tables' size.
 */
export const statsOldestProcedure = viewerProcedure
  .input(statsOldestInput)
  .output(statsOldestOutput)
  .query(({ ctx, input }) => ctx.services.db.reads(readTenant(ctx, input?.tenant)).oldestRecord());
