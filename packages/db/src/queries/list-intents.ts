import { INTENT_STATUSES, RESOLUTIONS } from "@tristate/core";
import { z } from "zod";
import { Prisma, type PrismaClient } from "../generated/prisma/client.ts";
import { tenantsOf } from "../rollups/record-sources.ts";
import {
  type ArgsRedactor,
  type IntentSummary,
  type PrismaRecordRow,
  SUMMARY_COLUMNS_SQL,
  type TenantScope,
  toIntentSummary,
} from "./intent-view.ts";
import { decodeCursor, encodeCursor } from "./list-cursor.ts";
import { checkWindow, epochMsSchema, filterTextSchema, parseQueryInput } from "./query-input.ts";
import { toolsMatching } from "./tool-match.ts";

/** Page size of {@link listIntents} when none is given. */
export const DEFAULT_LIST_LIMIT = 50;
/** Largest page of {@link listIntents}. */
export const MAX_LIST_LIMIT = 200;

const text = filterTextSchema;

/** The resolutions a person chose; the filter `resolution: "human"` means any of them. */
const HUMAN_RESOLUTIONS = RESOLUTIONS.filter((r) => r.startsWith("human_"));

/** Filters of {@link listIntents}; all optional, combined with AND. */
export const intentFiltersSchema = z
  .object({
    /** Tools whose name contains this text (case-insensitive; `%` and `_` are plain characters). */
    tool: text.optional(),
    status: z.enum(INTENT_STATUSES).optional(),
    /** One resolution, or `human`: any a person chose (human_confirmed_effect, human_confirmed_no_effect, human_resent). */
    resolution: z.enum([...RESOLUTIONS, "human"]).optional(),
    needsHuman: z.boolean().optional(),
    runId: text.optional(),
    stepId: text.optional(),
    /** Idempotency key (exact). */
    key: text.optional(),
    /** W3C trace id (exact). */
    traceId: text.optional(),
    /** Created at or after, epoch ms. */
    fromEpochMs: epochMsSchema.optional(),
    /** Created before, epoch ms. */
    toEpochMs: epochMsSchema.optional(),
  })
  .strict();

/** Filters of {@link listIntents}. */
export type IntentFilters = z.infer<typeof intentFiltersSchema>;

/** Input of {@link listIntents}. */
export const listIntentsInput = z.object({
  filters: intentFiltersSchema.default({}),
  /** `nextCursor` of the previous page (opaque). */
  cursor: z.string().min(1).max(500).optional(),
  /** Page size, 1–200. @default 50 */
  limit: z.number().int().min(1).max(MAX_LIST_LIMIT).default(DEFAULT_LIST_LIMIT),
});

/** One page of {@link listIntents}. */
export interface IntentPage {
  /** Newest first (created_at, then key, both descending). */
  items: IntentSummary[];
  /** Cursor of the next page, or null on the last page. */
  nextCursor: string | null;
}

/**
 * Intent records matching `filters`, newest first, by pages: keyset pagination on (created_at, key),
 * so records written while paging never shift a page (no duplicates, no gaps).
 *
 * Every page is an index range, whatever the filter and however deep (issue 14): the cursor bounds
 * `created_at <= cursor` (then `key <` on the cursor's instant), so the scan starts at the cursor on
 * (tenant, created_at, key) — or on a partial index when the filter implies its predicate: PENDING or
 * UNKNOWN (`live_created`), `needsHuman: true` (`needs_human`), a resolution (`resolved`); a tool
 * uses (tenant, tool, created_at). Without a tenant (admins), each tenant's page is read on its own
 * index range and the pages merged. Filters the indexes do not lead with (stepId, traceId, a rare
 * status among many records) are applied while walking the range.
 * @param options.redact - rewrites each record's args (masking; issue 5), default none.
 * @param options.tenant - only this tenant's records ({@link TenantScope}).
 * The tool filter is a substring (see `tool-match.ts`): the tenant's matching tool names are found
 * first, then read by `tool = …` (one match: the same index range as an exact name) or `= ANY(…)`.
 * @throws QueryInputError naming the field when the input or the cursor is invalid (`toEpochMs`
 *   for a window that ends before it starts).
 */
export async function listIntents(
  prisma: PrismaClient,
  input: z.input<typeof listIntentsInput> = {},
  options: { redact?: ArgsRedactor } & TenantScope = {},
): Promise<IntentPage> {
  const { filters: f, cursor, limit } = parseQueryInput(listIntentsInput, input);
  if (f.fromEpochMs !== undefined && f.toEpochMs !== undefined)
    checkWindow({ fromEpochMs: f.fromEpochMs, toEpochMs: f.toEpochMs }, "toEpochMs", { path: "filters." });
  // Enum and boolean filters are written as literals (their values are checked against the closed
  // unions above): a partial index is used only when the planner can prove its predicate, and a bound
  // parameter cast to an enum cannot be proved at plan time.
  const and: Prisma.Sql[] = [];
  if (f.status !== undefined) and.push(Prisma.raw(`status = '${INTENT_STATUSES[INTENT_STATUSES.indexOf(f.status)]}'`));
  if (f.resolution === "human")
    and.push(Prisma.raw(`resolution IN (${HUMAN_RESOLUTIONS.map((r) => `'${r}'`).join(", ")})`));
  else if (f.resolution === "needs_human")
    // Derived, never stored (`shownResolution`): an UNKNOWN waiting for a person (the `needs_human` index).
    and.push(Prisma.raw("needs_human AND status = 'UNKNOWN'"));
  else if (f.resolution !== undefined)
    and.push(Prisma.raw(`resolution = '${RESOLUTIONS[RESOLUTIONS.indexOf(f.resolution)]}'`));
  if (f.needsHuman !== undefined) and.push(Prisma.raw(f.needsHuman ? "needs_human" : "NOT needs_human"));
  if (f.runId !== undefined) and.push(Prisma.sql`run_id = ${f.runId}`);
  if (f.stepId !== undefined) and.push(Prisma.sql`step_id = ${f.stepId}`);
  if (f.key !== undefined) and.push(Prisma.sql`key = ${f.key}`);
  if (f.traceId !== undefined) and.push(Prisma.sql`trace_id = ${f.traceId}`);
  if (f.fromEpochMs !== undefined) and.push(Prisma.sql`created_at >= ${new Date(f.fromEpochMs)}::timestamptz`);
  if (f.toEpochMs !== undefined) and.push(Prisma.sql`created_at < ${new Date(f.toEpochMs)}::timestamptz`);
  if (cursor !== undefined) {
    const after = decodeCursor(cursor);
    // A row comparison: the index scan starts at the cursor, however deep the page.
    and.push(Prisma.sql`(created_at, key) < (${after.createdAt}::timestamptz, ${after.key})`);
  }
  const tenants = await tenantsOf(prisma, options.tenant);
  const pages = await Promise.all(
    tenants.map(async (tenant) => {
      const where = [Prisma.sql`tenant = ${tenant}`, ...and];
      if (f.tool !== undefined) {
        const tools = await toolsMatching(prisma, tenant, f.tool);
        if (tools.length === 0) return [];
        where.push(tools.length === 1 ? Prisma.sql`tool = ${tools[0]}` : Prisma.sql`tool = ANY(${tools}::text[])`);
      }
      return prisma.$queryRaw<PrismaRecordRow[]>(Prisma.sql`
        SELECT ${Prisma.raw(SUMMARY_COLUMNS_SQL)} FROM intent_records
        WHERE ${Prisma.join(where, " AND ")}
        ORDER BY created_at DESC, key DESC LIMIT ${limit + 1}::int`);
    }),
  );
  const rows = pages
    .flat()
    .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.key < b.key ? 1 : a.key > b.key ? -1 : 0))
    .slice(0, limit + 1);
  const items = rows.slice(0, limit).map((row) => toIntentSummary(row, options.redact));
  const last = items.at(-1);
  return { items, nextCursor: rows.length > limit && last ? encodeCursor(last) : null };
}
