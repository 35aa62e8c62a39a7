import { z } from "zod";
import { AppError } from "../../app-error.ts";
import { anyKeyProcedure, outcomesVisible } from "../../trpc/init.ts";
import { intentRecordSchema, recordOut } from "../read-schemas.ts";
import { maskedRecord } from "../secrets.ts";
import { tenantForKey } from "../tenancy.ts";

/**
 * `calls.get({ key })` → the intent record for an idempotency key, or NOT_FOUND. Secret argument
 * values are masked for every role but admin, the calling agent included (see `secrets.ts`).
 * Only the key's tenant's records are found (another tenant's record is NOT_FOUND too).
 */
export const callsGetProcedure = anyKeyProcedure
  .use(outcomesVisible)
  .input(z.object({ key: z.string().regex(/^[0-9a-f]{32}$/, "must be 32 lower-case hex characters") }).strict())
  .output(intentRecordSchema)
  .query(async ({ ctx, input }) => {
    const tenant = await tenantForKey(ctx, input.key);
    const record = tenant === null ? null : await ctx.services.tenants.store(tenant).get(input.key);
    if (!record) throw new AppError("NOT_FOUND", `no intent record with key ${input.key}`, { field: "key" });
    return maskedRecord(ctx, recordOut(record));
  });
