import { Prisma, type PrismaClient } from "../generated/prisma/client.ts";
import type { TenantScope } from "./intent-view.ts";

/** How many records wait for a person, and since when (the human queue's size and its oldest entry). */
export interface NeedsHumanSummary {
  /** Records in the human queue (`needs_human`). */
  count: number;
  /** Creation of the oldest of them, epoch ms, or null when the queue is empty. */
  oldestCreatedAtEpochMs: number | null;
  /** Its age by the database's clock (the clock that wrote the records; rule 9), ms, or null. */
  oldestAgeMs: number | null;
}

/**
 * The human queue's size and its oldest record's creation and age, in one read of the `needs_human`
 * partial index (`intent_records_needs_human_idx`: tenant, created_at, key) — no row of the table is
 * read. Cheap enough for a header badge refreshed every few seconds.
 * @param options.tenant - only this tenant's records ({@link TenantScope}); undefined: every tenant's.
 */
export async function needsHumanSummary(prisma: PrismaClient, options: TenantScope = {}): Promise<NeedsHumanSummary> {
  const tenant = options.tenant !== undefined ? Prisma.sql`tenant = ${options.tenant} AND` : Prisma.empty;
  const rows = await prisma.$queryRaw<{ n: number; oldest: Date | null; age_ms: number | null }[]>(
    Prisma.sql`SELECT count(*)::int AS n, min(created_at) AS oldest,
      floor(extract(epoch FROM clock_timestamp() - min(created_at)) * 1000)::float8 AS age_ms
      FROM intent_records WHERE ${tenant} needs_human`,
  );
  const row = rows[0];
  return {
    count: row?.n ?? 0,
    oldestCreatedAtEpochMs: row?.oldest ? row.oldest.getTime() : null,
    oldestAgeMs: row?.age_ms == null ? null : Math.max(0, row.age_ms),
  };
}
