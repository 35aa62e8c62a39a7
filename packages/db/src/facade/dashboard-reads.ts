import type { PrismaClient } from "../generated/prisma/client.ts";
import { getIntent } from "../queries/get-intent.ts";
import { getRun } from "../queries/get-run.ts";
import { listIntents } from "../queries/list-intents.ts";
import { listRuns } from "../queries/list-runs.ts";
import { listStale } from "../queries/list-stale.ts";
import { needsHumanSummary } from "../queries/needs-human-summary.ts";
import { oldestRecord } from "../queries/oldest-record.ts";
import { searchByIdentity } from "../queries/search-identity.ts";
import { statsOverview } from "../queries/stats-overview.ts";
import type { DashboardReads } from "./ports.ts";

/**
 * {@link DashboardReads} over Prisma: the queries of `src/queries/` with the tenant scope bound
 * (`tenant` undefined: every tenant's records).
 */
export function dashboardReads(prisma: PrismaClient, tenant: string | undefined): DashboardReads {
  return {
    statsOverview: (input) => statsOverview(prisma, input, { tenant }),
    listIntents: (input) => listIntents(prisma, input, { tenant }),
    searchByIdentity: (input) => searchByIdentity(prisma, input, { tenant }),
    getIntent: (key) => getIntent(prisma, key, { tenant }),
    listRuns: (input, options) => listRuns(prisma, input, { tenant, ...options }),
    getRun: (runId) => getRun(prisma, runId, { tenant }),
    listStale: (input) => listStale(prisma, input, { tenant }),
    oldestRecord: () => oldestRecord(prisma, { tenant }),
    needsHumanSummary: () => needsHumanSummary(prisma, { tenant }),
  };
}
