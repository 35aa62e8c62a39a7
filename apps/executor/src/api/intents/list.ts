import { intentFiltersSchema, MAX_LIST_LIMIT } from "@tristate/db";
import { z } from "zod";
import { viewerProcedure } from "../../trpc/init.ts";
import { intentSummarySchema } from "../read-schemas.ts";
import { maskedRecord } from "../secrets.ts";
import { readTenant, tenantInput } from "../tenancy.ts";

/** Input of `intents.list`: filters (all optional, ANDed), the previous page's cursor, a page size. */
export const listIntentsInput = z
  .object({
    /**
     * tool (a case-insensitive substring of the name), status, resolution, needsHuman, runId, stepId,
     * key, traceId, fromEpochMs/toEpochMs (created).
     */
    filters: intentFiltersSchema.optional(),
    /** `nextCursor` of the previous page (opaque). */
    cursor: z.string().min(1).max(500).optional(),
    /** Page size, 1–200. @default 50 */
    limit: z.number().int().min(1).max(MAX_LIST_LIMIT).optional(),
    /** Admin keys: only this tenant's (default: every tenant). Other keys always see their own tenant. */
    tenant: tenantInput,
  })
  .strict();

/** Output of `intents.list`: newest first; `nextCursor` null on the last page. */
export const listIntentsOutput = z.object({
  items: z.array(intentSummarySchema),
  nextCursor: z.string().nullable(),
});

/**
 * `intents.list({ filters?, cursor?, limit? })` → a page of intent records, newest first (keyset
 * pagination on created time and key: no duplicates or gaps across pages). Secret argument values
 * are masked for every role but admin.
 * @throws AppError BAD_INPUT naming the field (e.g. `cursor` for a forged cursor).
 */
export const intentsListProcedure = viewerProcedure
  .input(listIntentsInput.optional())
  .output(listIntentsOutput)
  .query(async ({ ctx, input }) => {
    const page = await ctx.services.db.reads(readTenant(ctx, input?.tenant)).listIntents({
      ...(input?.filters ? { filters: input.filters } : {}),
      ...(input?.cursor !== undefined ? { cursor: input.cursor } : {}),
      ...(input?.limit !== undefined ? { limit: input.limit } : {}),
    });
    return { ...page, items: page.items.map((r) => maskedRecord(ctx, r)) };
  });
