import { canon, textRuleBroken } from "@tristate/core";
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
import { decodeCursor, encodeCursor } from "./list-cursor.ts";
import { filterTextSchema, parseQueryInput } from "./query-input.ts";
import { toolFilterPattern } from "./tool-match.ts";

/** Page size of {@link searchByIdentity} when none is given. */
export const DEFAULT_IDENTITY_LIMIT = 50;
/** Largest page of {@link searchByIdentity}. */
export const MAX_IDENTITY_LIMIT = 100;

/** Input of {@link searchByIdentity}. */
export const searchByIdentityInput = z
  .object({
    /** The business value to find (an order id, an e-mail address, an amount): 1–200 characters, trimmed. */
    value: z
      .string()
      .trim()
      .min(1, "must not be empty")
      .max(200, "must be at most 200 characters")
      .superRefine((v, ctx) => {
        // No stored identity holds such text, and the SQL/JSON path could not carry it.
        const rule = textRuleBroken(v);
        if (rule) ctx.addIssue({ code: "custom", message: rule });
      }),
    /** Only tools whose name contains this text (case-insensitive, like `intents.list`'s `tool`). */
    tool: filterTextSchema.optional(),
    /** `nextCursor` of the previous page (opaque). */
    cursor: z.string().min(1).max(500).optional(),
    /** Page size, 1–100. @default 50 */
    limit: z.number().int().min(1).max(MAX_IDENTITY_LIMIT).default(DEFAULT_IDENTITY_LIMIT),
  })
  .strict();

/** A record found by {@link searchByIdentity}. */
export interface IdentityMatch extends IntentSummary {
  /** The identity fields whose value matched (names as the tool declares them), at least one. */
  matchedFields: string[];
  /** True when the record is in the archive (settled past retention; `archiveIntents`). */
  archived: boolean;
}

/** One page of {@link searchByIdentity}. */
export interface IdentityPage {
  /** Newest first (created_at, then key, both descending), live and archived records merged. */
  items: IdentityMatch[];
  /** Cursor of the next page, or null on the last page. */
  nextCursor: string | null;
  /** The stored forms the value was matched as (see {@link identitySearchForms}). */
  forms: string[];
}

const DECIMAL_TEXT = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;
/** Most places `canon.decimal` stores (`@tristate/core`). */
const MAX_DECIMAL_PLACES = 20;

/**
 * The stored forms a searched value matches: identities hold canonical strings (`canon` of
 * `@tristate/core`), so `a-1182` is also tried as `A-1182` (`canon.upper`) and `Ann@X.io` as
 * `ann@x.io` (`canon.lower`); a plain decimal as every form `canon.decimal` stores it in without
 * rounding (`49.9` → `49.9`, `49.90`, `49.900`, … up to 20 places; `1182` → `1182`, `1182.0`, …).
 * Matching is otherwise exact: a stored mixed-case value (`canon.exact`) is found only as typed or
 * in one case, and the value is not a pattern (no prefix or substring search).
 * @param value - trimmed search text.
 * @returns distinct forms, the value (NFC) first.
 */
export function identitySearchForms(value: string): string[] {
  const nfc = value.normalize("NFC");
  const forms = [nfc, nfc.toUpperCase(), nfc.toLowerCase()];
  // A decimal with more places than canon.decimal stores is another number than any stored amount:
  // its rounded forms would find records that do not hold it.
  const significantPlaces = (nfc.split(".")[1] ?? "").replace(/0+$/, "").length;
  if (DECIMAL_TEXT.test(nfc) && significantPlaces <= MAX_DECIMAL_PLACES) {
    const widest = canon.decimal(MAX_DECIMAL_PLACES)(nfc, "value");
    const fewest = widest.replace(/\.?0+$/, "").split(".")[1]?.length ?? 0;
    for (let places = fewest; places <= MAX_DECIMAL_PLACES; places++) forms.push(canon.decimal(places)(nfc, "value"));
  }
  return [...new Set(forms)];
}

/**
 * The SQL/JSON path that holds when any top-level identity value equals one of `forms`: string
 * literals are JSON-escaped (jsonpath reads the same escapes), so no form can end the literal.
 */
function identityPath(forms: string[]): string {
  return `strict $.* ? (${forms.map((f) => `@ == ${JSON.stringify(f)}`).join(" || ")})`;
}

function where(table: "live" | "archive", path: string, tenant: string | undefined, tool?: string, cursor?: string) {
  const and = [Prisma.sql`identity @? ${path}::jsonpath`];
  if (tenant !== undefined) and.push(Prisma.sql`tenant = ${tenant}`);
  if (tool !== undefined) and.push(Prisma.sql`tool ILIKE ${toolFilterPattern(tool)}`);
  if (cursor !== undefined) {
    const after = decodeCursor(cursor);
    and.push(Prisma.sql`(created_at, key) < (${after.createdAt}::timestamptz, ${after.key})`);
  }
  const from = Prisma.raw(table === "live" ? "intent_records" : "intent_records_archive");
  return Prisma.sql`SELECT ${Prisma.raw(SUMMARY_COLUMNS_SQL)}, ${Prisma.raw(table === "archive" ? "true" : "false")} AS archived FROM ${from}
    WHERE ${Prisma.join(and, " AND ")}`;
}

/**
 * The statement of {@link searchByIdentity} (exported for its plan test): the matches in both tables
 * gathered MATERIALIZED (so by their GIN indexes), then sorted, `limit + 1` rows.
 */
export function identitySearchSql(
  input: z.output<typeof searchByIdentityInput>,
  forms: string[],
  tenant: string | undefined,
): Prisma.Sql {
  const path = identityPath(forms);
  const { tool, cursor, limit } = input;
  return Prisma.sql`
    WITH found AS MATERIALIZED (
      ${where("live", path, tenant, tool, cursor)}
      UNION ALL
      ${where("archive", path, tenant, tool, cursor)}
    )
    SELECT * FROM found ORDER BY "createdAt" DESC, key DESC LIMIT ${limit + 1}::int`;
}

/**
 * Records whose business identity (`identity`: the tool's declared identity fields, canonicalised)
 * has a field holding `value` — "what happened to order A-1182?" — live and archived, newest first,
 * by keyset pages on (created_at, key) like {@link listIntents}: records written while paging never
 * shift a page. Each page reads the GIN index on `identity` of both tables (`intent_records_identity_idx`,
 * `intent_records_archive_identity_idx`) and sorts the matches: the rows are gathered in a
 * MATERIALIZED step, so the planner never walks the (tenant, created_at) index testing every record
 * for a value it guesses common; a value in very many records costs a sort of them on every page.
 * Matching: see {@link identitySearchForms}.
 * @param options.tenant - only this tenant's records ({@link TenantScope}); absent: every tenant's.
 * @param options.redact - rewrites each record's args (masking), default none.
 * @throws QueryInputError naming the field when the input or the cursor is invalid.
 */
export async function searchByIdentity(
  prisma: PrismaClient,
  input: z.input<typeof searchByIdentityInput>,
  options: { redact?: ArgsRedactor } & TenantScope = {},
): Promise<IdentityPage> {
  const parsed = parseQueryInput(searchByIdentityInput, input);
  const forms = identitySearchForms(parsed.value);
  const rows = await prisma.$queryRaw<(PrismaRecordRow & { archived: boolean })[]>(
    identitySearchSql(parsed, forms, options.tenant),
  );
  const { limit } = parsed;
  const wanted = new Set(forms);
  const items = rows.slice(0, limit).map((row): IdentityMatch => {
    const summary = toIntentSummary(row, options.redact);
    const matchedFields = Object.entries(summary.identity)
      .filter(([, v]) => wanted.has(v))
      .map(([field]) => field);
    return { ...summary, matchedFields, archived: row.archived };
  });
  const last = items.at(-1);
  return { items, nextCursor: rows.length > limit && last ? encodeCursor(last) : null, forms };
}
