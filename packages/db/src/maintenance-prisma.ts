/**
 * A small pool of its own for long maintenance (the read model's rollup refresh and archiving): its
 * statements may run up to {@link MAINTENANCE_STATEMENT_TIMEOUT_MS}, where the hot path's pool
 * cancels at `TRISTATE_DB_STATEMENT_TIMEOUT_MS` (default 30 s) — a first refresh over a day of
 * records can take longer, and must not be cancelled on every round.
 */
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { parseIntoClientConfig } from "pg-connection-string";
import { PrismaClient } from "./generated/prisma/client.ts";
import { survivePoolErrors } from "./pool-errors.ts";
import { type DatabaseTimeouts, DEFAULT_DATABASE_TIMEOUTS, poolTimeoutConfig } from "./pool-timeouts.ts";

/** Longest one maintenance statement may run, ms (10 min: the refresh's transaction limit). */
const MAINTENANCE_STATEMENT_TIMEOUT_MS = 600_000;

/** Connections of the maintenance pool (one refresh or archive step runs at a time). */
const MAINTENANCE_POOL_SIZE = 2;

/** Prisma's client over the maintenance pool, and how to close both. */
export interface MaintenancePrisma {
  prisma: PrismaClient;
  close(): Promise<void>;
}

/**
 * Opens the maintenance pool (connections open lazily, on first use): the service's connect and
 * idle-in-transaction limits, {@link MAINTENANCE_STATEMENT_TIMEOUT_MS} per statement.
 * @throws when the URL cannot be parsed.
 */
export function openMaintenancePrisma(
  databaseUrl: string,
  timeouts: Partial<DatabaseTimeouts> = {},
): MaintenancePrisma {
  const config = parseIntoClientConfig(databaseUrl);
  const limits = poolTimeoutConfig({
    ...DEFAULT_DATABASE_TIMEOUTS,
    ...timeouts,
    statementTimeoutMs: MAINTENANCE_STATEMENT_TIMEOUT_MS,
  });
  const pool = new pg.Pool({
    ...config,
    options: [config.options, "-c jit=off"].filter(Boolean).join(" "),
    ...limits,
    max: MAINTENANCE_POOL_SIZE,
  });
  survivePoolErrors(pool);
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  return {
    prisma,
    async close() {
      await prisma.$disconnect();
      await pool.end();
    },
  };
}
