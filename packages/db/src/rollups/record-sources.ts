/**
 * Where the read side finds intent records: the hot table and the archive (`archiveIntents`), by
 * tenant first (the tenant leads every index, so a read over every tenant goes tenant by tenant).
 */
import { Prisma, type PrismaClient } from "../generated/prisma/client.ts";
import { FACT_COLUMNS } from "./record-facts.ts";

/** A Prisma client or an interactive transaction's client. */
export type Queryable = Pick<PrismaClient, "$queryRaw" | "$executeRaw">;

/**
 * The tenants that have records (hot or archived), sorted: a loose index scan of each table's primary
 * key (one probe per tenant), never a scan of the rows.
 */
export async function tenantsWithRecords(db: Queryable): Promise<string[]> {
  const rows = await db.$queryRaw<{ tenant: string }[]>(Prisma.sql`
    WITH RECURSIVE hot(tenant) AS (
      SELECT min(tenant) FROM intent_records
      UNION ALL
      SELECT (SELECT min(tenant) FROM intent_records WHERE tenant > hot.tenant) FROM hot WHERE hot.tenant IS NOT NULL
    ), cold(tenant) AS (
      SELECT min(tenant) FROM intent_records_archive
      UNION ALL
      SELECT (SELECT min(tenant) FROM intent_records_archive WHERE tenant > cold.tenant) FROM cold WHERE cold.tenant IS NOT NULL
    )
    SELECT tenant FROM hot WHERE tenant IS NOT NULL
    UNION
    SELECT tenant FROM cold WHERE tenant IS NOT NULL
    ORDER BY 1`);
  return rows.map((r) => r.tenant);
}

/** The tenants a read covers: the one named, or every tenant with records. */
export async function tenantsOf(db: Queryable, tenant: string | undefined): Promise<string[]> {
  return tenant !== undefined ? [tenant] : tenantsWithRecords(db);
}

/**
 * Fact rows ({@link FACT_COLUMNS}) of the records of `tenants` created in [fromMs, toMs), hot and
 * archived; on the (tenant, created_at, key) indexes.
 */
export function recordsCreatedIn(tenants: string[], fromMs: number, toMs: number): Prisma.Sql {
  const where = Prisma.sql`r.tenant = ANY(${tenants}::text[])
    AND r.created_at >= ${new Date(fromMs)}::timestamptz AND r.created_at < ${new Date(toMs)}::timestamptz`;
  return Prisma.sql`SELECT ${Prisma.raw(FACT_COLUMNS)} FROM intent_records r WHERE ${where}
    UNION ALL SELECT ${Prisma.raw(FACT_COLUMNS)} FROM intent_records_archive r WHERE ${where}`;
}

/** A (tenant, tool, minute) whose records are read one by one. */
export interface MinuteKey {
  tenant: string;
  tool: string;
  /** Epoch ms, a whole minute. */
  minuteMs: number;
}

/**
 * Fact rows of the records of the given (tenant, tool, minute) keys, hot and archived; on the (tenant, tool, created_at) index (hot) and (tenant, created_at, key) (archive).
 */
export function recordsOfMinutes(keys: MinuteKey[]): Prisma.Sql {
  const tenants = keys.map((k) => k.tenant);
  const tools = keys.map((k) => k.tool);
  const minutes = keys.map((k) => k.minuteMs);
  const from = (table: string) => Prisma.sql`
    SELECT ${Prisma.raw(FACT_COLUMNS)}
    FROM unnest(${tenants}::text[], ${tools}::text[], ${minutes}::float8[]) AS d(tenant, tool, minute_ms)
    JOIN ${Prisma.raw(table)} r ON r.tenant = d.tenant AND r.tool = d.tool
      AND r.created_at >= TIMESTAMPTZ 'epoch' + d.minute_ms * interval '1 millisecond'
      AND r.created_at < TIMESTAMPTZ 'epoch' + (d.minute_ms + 60000) * interval '1 millisecond'`;
  return Prisma.sql`${from("intent_records")} UNION ALL ${from("intent_records_archive")}`;
}
