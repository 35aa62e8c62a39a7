import { searchByIdentityInput } from "@tristate/db";
import { z } from "zod";
import { viewerProcedure } from "../../trpc/init.ts";
import { intentSummarySchema } from "../read-schemas.ts";
import { maskedRecord } from "../secrets.ts";
import { readTenant, tenantInput } from "../tenancy.ts";

/**
 * Input of `intents.byIdentity`: `value` (1–200 characters, trimmed), `tool` (a case-insensitive
 * substring of the tool name, like `intents.list`), `cursor` (the previous page's `nextCursor`),
 * `limit` (1–100, default 50), and for admin keys `tenant`. Unknown keys are refused.
 */
export const intentsByIdentityInput = searchByIdentityInput
  .extend({
    /** Admin keys: only this tenant's (default: every tenant). Other keys always see their own tenant. */
    tenant: tenantInput,
  })
  .strict();

/** Output of `intents.byIdentity`: records newest first, each with the fields that matched. */
export const intentsByIdentityOutput = z.object({
  items: z.array(
    intentSummarySchema.extend({
      /** The identity fields holding the value (at least one). */
      matchedFields: z.array(z.string()),
      /** True when the record is in the archive (settled past retention). */
      archived: z.boolean(),
    }),
  ),
  /** Cursor of the next page; null on the last page. */
  nextCursor: z.string().nullable(),
  /** The stored forms the value was matched as: as typed, upper and lower case, a decimal's fixed-place forms. */
  forms: z.array(z.string()),
});

/**
 * `intents.byIdentity({ value, tool?, cursor?, limit? })` → the records (live and archived) whose
 * business identity has a field holding `value` — "what happened to order A-1182?" — newest first,
 * keyset-paged on created time and key, in the caller's tenant (admins: every tenant's, or `tenant`).
 * Secret argument values are masked for every role but admin, and a record that matched only on a secret
 * identity field is left out for them (a page may then hold fewer than `limit` items).
 * @throws AppError BAD_INPUT naming the field (`value` empty or over 200 characters, `limit`, a forged
 *   `cursor`, an unknown key); FORBIDDEN (field `tenant`) when a non-admin names another tenant.
 */
export const intentsByIdentityProcedure = viewerProcedure
  .input(intentsByIdentityInput)
  .output(intentsByIdentityOutput)
  .query(async ({ ctx, input }) => {
    const { tenant, ...search } = input;
    const page = await ctx.services.db.reads(readTenant(ctx, tenant)).searchByIdentity(search);
    // A match only on a secret field (masked for this caller) is left out: the search must not tell a
    // viewer which card numbers exist. Its matched fields are those whose shown value still matches.
    const forms = new Set(page.forms);
    const items = page.items.flatMap((record) => {
      const masked = maskedRecord(ctx, record);
      const identity = masked.identity as Record<string, unknown>;
      const matchedFields = masked.matchedFields.filter((field) => forms.has(identity[field] as string));
      return matchedFields.length > 0 ? [{ ...masked, matchedFields }] : [];
    });
    return { ...page, items };
  });
