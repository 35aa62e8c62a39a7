import { readdir } from "node:fs/promises";
import { checkTenant } from "@tristate/core";
import { ApiKeyStore } from "../api-key-store.ts";
import { DashboardSessionStore } from "../dashboard-session-store.ts";
import type { PrismaClient } from "../generated/prisma/client.ts";
import { PgNotificationOutbox } from "../notifications/outbox.ts";
import type { TenantNotifications } from "../notifications/ports.ts";
import { PgTenantNotifications } from "../notifications/tenant-notifications.ts";
import { PrismaOperatorStore } from "../operator-store.ts";
import { MIGRATIONS_DIR } from "../paths.ts";
import type { PrismaIntentStore } from "../prisma-intent-store.ts";
import { startReadModelLoop } from "../rollups/read-model-loop.ts";
import { startVacuumLoop, vacuumDeadRows } from "../vacuum.ts";
import { dashboardReads } from "./dashboard-reads.ts";
import type { MigrationStatus, OperatorLog, TristateDatabase } from "./ports.ts";

/** Migrations the database has finished (and not rolled back), in Prisma's own table. */
const APPLIED_MIGRATIONS_SQL =
  "SELECT count(*)::text AS n FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL";

/** The one look-up of a key across tenants (the first tenant by name). */
const TENANT_OF_KEY_SQL = "SELECT tenant FROM intent_records WHERE key = $1 ORDER BY tenant LIMIT 1";

/** Options of {@link postgresDatabase}. */
export interface PostgresDatabaseOptions {
  /** True for the embedded PGlite database. */
  embedded: boolean;
  /** Closes what the store runs on (the store first, then e.g. the embedded server). Called once. */
  close(): Promise<void>;
  /**
   * Prisma's client for long maintenance (the read model loop: rollup refresh, archiving), over a pool
   * whose statements may run longer than the hot path's (maintenance-prisma.ts). @default the store's `prisma`
   */
  maintenancePrisma?: PrismaClient;
  /** The migrations folder whose directories {@link MigrationStatus.expected} counts. @default MIGRATIONS_DIR */
  migrationsDir?: string;
}

/**
 * {@link TristateDatabase} over a PostgreSQL intent store: every tenant's views, the keys, sessions,
 * operator stores and dashboard reads share the store's pool and Prisma client.
 */
export function postgresDatabase(store: PrismaIntentStore, options: PostgresDatabaseOptions): TristateDatabase {
  const migrationsDir = options.migrationsDir ?? MIGRATIONS_DIR;
  const operators = new Map<string, OperatorLog>();
  const notifications = new Map<string, TenantNotifications>();
  const runSql = (text: string) => store.pool.query(text);
  let expected: Promise<number> | undefined;
  let closing: Promise<void> | undefined;
  return {
    embedded: options.embedded,
    intents: (tenant) => store.forTenant(tenant),
    operators(tenant) {
      let operator = operators.get(tenant);
      if (!operator) {
        operator = new PrismaOperatorStore(store.prisma, tenant);
        operators.set(tenant, operator);
      }
      return operator;
    },
    keys: new ApiKeyStore(store.prisma),
    sessions: new DashboardSessionStore(store.prisma),
    notifications(tenant) {
      let view = notifications.get(tenant);
      if (!view) {
        view = new PgTenantNotifications(store.pool, checkTenant(tenant));
        notifications.set(tenant, view);
      }
      return view;
    },
    notificationOutbox: new PgNotificationOutbox(store.pool),
    reads: (tenant) => dashboardReads(store.prisma, tenant),
    async tenantOfKey(key) {
      const { rows } = await store.pool.query<{ tenant: string }>(TENANT_OF_KEY_SQL, [key]);
      return rows[0]?.tenant ?? null;
    },
    async migrationStatus() {
      // The folder is read once (a failed read is tried again on the next check).
      expected ??= readdir(migrationsDir, { withFileTypes: true }).then(
        (entries) => entries.filter((e) => e.isDirectory()).length,
        (error: unknown) => {
          expected = undefined;
          throw error;
        },
      );
      const [{ rows }, count] = await Promise.all([store.pool.query<{ n: string }>(APPLIED_MIGRATIONS_SQL), expected]);
      return { applied: Number(rows[0]?.n ?? 0), expected: count };
    },
    vacuum: () => vacuumDeadRows(runSql),
    startVacuumLoop: (loopOptions) => startVacuumLoop(runSql, loopOptions),
    startReadModelLoop: (loopOptions) => startReadModelLoop(options.maintenancePrisma ?? store.prisma, loopOptions),
    clockEpochMs: () => store.clockEpochMs(),
    close() {
      closing ??= options.close();
      return closing;
    },
  };
}
