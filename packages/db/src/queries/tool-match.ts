import { Prisma, type PrismaClient } from "../generated/prisma/client.ts";

/**
 * The tool filter of every dashboard list (`intents.list`, `runs.list`, `queue.list`, `audit.list`):
 * a case-insensitive substring of the tool name, so `refund` finds `refund` and `reverse_refund`.
 * One rule for every list, written once here.
 */

/**
 * The `ILIKE` pattern (escape character `\`, PostgreSQL's default) matching tool names that contain
 * `text`: `%`, `_` and `\` in `text` match themselves, not as wildcards.
 * @example toolFilterPattern("re_fund%") === "%re\\_fund\\%%"
 */
export function toolFilterPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** True when `tool` matches the tool filter `text` (the same rule as {@link toolFilterPattern}, in JS). */
export function toolMatchesFilter(tool: string, text: string): boolean {
  return tool.toLowerCase().includes(text.toLowerCase());
}

/**
 * The tenant's tool names (live records) that match the tool filter `text`, found by a skip scan of
 * `(tenant, tool, created_at)` (one index probe per distinct tool), so a list can then read each
 * match by its index range instead of testing every row against a pattern.
 */
export async function toolsMatching(
  db: Pick<PrismaClient, "$queryRaw">,
  tenant: string,
  text: string,
): Promise<string[]> {
  const rows = await db.$queryRaw<{ tool: string }[]>(Prisma.sql`
    WITH RECURSIVE tools AS (
      (SELECT tool FROM intent_records WHERE tenant = ${tenant} ORDER BY tool LIMIT 1)
      UNION ALL
      SELECT (SELECT n.tool FROM intent_records n WHERE n.tenant = ${tenant} AND n.tool > t.tool ORDER BY n.tool LIMIT 1)
      FROM tools t WHERE t.tool IS NOT NULL
    )
    SELECT tool FROM tools WHERE tool IS NOT NULL AND tool ILIKE ${toolFilterPattern(text)}`);
  return rows.map((r) => r.tool);
}
