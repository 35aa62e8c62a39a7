import { z } from "zod";
import { AppError } from "../../app-error.ts";
import { viewerProcedure } from "../../trpc/init.ts";
import { intentDetailRecordSchema, timelineEventSchema } from "../read-schemas.ts";
import { maskerFor, maskRecord } from "../secrets.ts";
import { readTenant, tenantInput } from "../tenancy.ts";

/** Input of `intents.get`: an idempotency key. */
export const getIntentInput = z
  .object({
    key: z.string().regex(/^[0-9a-f]{32}$/, "must be 32 lower-case hex characters"),
    /** Admin keys: look only in this tenant (default: whichever tenant holds the key). Others: their own. */
    tenant: tenantInput,
  })
  .strict();

/** Output of `intents.get`: the whole record and its timeline, oldest event first. */
export const getIntentOutput = z.object({
  record: intentDetailRecordSchema,
  events: z.array(timelineEventSchema),
});

/**
 * `intents.get({ key })` → the record (result included) and its event timeline, secret argument
 * values masked for every role but admin (in the record and in every event).
 * @throws AppError NOT_FOUND (field `key`) when no record has this key.
 */
export const intentsGetProcedure = viewerProcedure
  .input(getIntentInput)
  .output(getIntentOutput)
  .query(async ({ ctx, input }) => {
    const tenant = readTenant(ctx, input.tenant);
    const detail = await ctx.services.db.reads(tenant).getIntent(input.key);
    if (!detail) throw new AppError("NOT_FOUND", `no intent record with key ${input.key}`, { field: "key" });
    const masker = maskerFor(ctx, detail.record.tool, detail.record.args);
    if (!masker.active) return detail;
    return {
      record: maskRecord(masker, detail.record),
      events: detail.events.map((e) => ({ ...e, data: masker.value(e.data) })),
    };
  });
