import { Prisma, type PrismaClient } from "../generated/prisma/client.ts";
import { tenantsOf } from "../rollups/record-sources.ts";
import type { TenantScope } from "./intent-view.ts";

/** How far back the records go: what the dashboard's overview fits its default window to. */
export interface OldestRecord {
  /** Creation of the oldest record (live or archived), epoch ms, or null when there is none. */
  oldestCreatedAtEpochMs: number | null;
}

/**
 * The creation time of the oldest record, live or archived. Cost: two index probes per tenant (the
 * first entry of `(tenant, created_at, key)` in `intent_records` and in `intent_records_archive`),
 * whatever the tables' size; for every tenant, the tenants are found by a skip scan of the same indexes.
 * @param options.tenant - only this tenant's records ({@link TenantScope}); undefined: every tenant's.
 */
export async function oldestRecord(prisma: PrismaClient, options: TenantScope = {}): Promise<OldestRecord> {
  const tenants = await tenantsOf(prisma, options.tenant);
  if (!tenants.length) return { oldestCreatedAtEpochMs: null };
  const rows = await prisma.$queryRaw<{ oldest: Date | null }[]>(Prisma.sql`
    SELECT min(least(
      (SELECT r.created_at FROM intent_records r WHERE r.tenant = t.tenant ORDER BY r.created_at LIMIT 1),
      (SELECT a.created_at FROM intent_records_archive a WHERE a.tenant = t.tenant ORDER BY a.created_at LIMIT 1)
    )) AS oldest
    FROM unnest(${tenants}::text[]) AS t(tenant)`);
  const oldest = rows[0]?.oldest;
  return { oldestCreatedAtEpochMs: oldest ? oldest.getTime() : null };
}
