/**
 * `@tristate/db`: the durable intent log on PostgreSQL (Prisma 7), its migrations (Prisma's
 * WebAssembly schema engine), and the embedded default database (PGlite).
 *
 * The service takes one object from here: `openDatabase()` → {@link TristateDatabase} (intent log and
 * operator store per tenant, keys, sessions, dashboard reads, migration status, vacuum, close), typed
 * by the ports in `facade/ports.ts`. The store classes stay exported for embedders, benchmarks and tests.
 */
export { API_KEY_ROLES, type ApiKeyInfo, type ApiKeyRole, ApiKeyStore, hashApiKey } from "./api-key-store.ts";
export {
  DashboardSessionStore,
  hashSessionId,
  type SessionLimits,
} from "./dashboard-session-store.ts";
export { EmbeddedDatabaseInUseError, type EmbeddedPostgres, startEmbeddedPostgres } from "./embedded-postgres.ts";
export { type DbEnv, LOCAL_POSTGRES_URL, readDbEnv } from "./env.ts";
export type {
  ApiKeys,
  DashboardReads,
  DashboardSessions,
  MigrationStatus,
  OperatorLog,
  TristateDatabase,
} from "./facade/ports.ts";
export { type PostgresDatabaseOptions, postgresDatabase } from "./facade/postgres-database.ts";
export {
  applyMigrations,
  createMigration,
  diffToSchema,
  type MigrationPaths,
  readMigrationsList,
  type SchemaDiff,
} from "./migrate/migrations.ts";
export { CHANNEL_FIELDS, checkChannelTarget, SUBSCRIBABLE_EVENT_KINDS } from "./notifications/channel-input.ts";
export { PgNotificationOutbox } from "./notifications/outbox.ts";
export * from "./notifications/ports.ts";
export { CHANNEL_DELETED_ERROR, PgTenantNotifications } from "./notifications/tenant-notifications.ts";
export { type OpenDatabase, type OpenDatabaseOptions, openDatabase } from "./open-database.ts";
export {
  AUDIT_ACTIONS,
  type AuditAction,
  type AuditListEntry,
  type AuditPage,
  type AuditQuery,
  PrismaOperatorStore,
  type QueuePage,
  recordFromSnapshot,
  recordSnapshot,
} from "./operator-store.ts";
export { DEFAULT_DATA_DIR, MIGRATIONS_DIR, REPO_ROOT, SCHEMA_PATH } from "./paths.ts";
export {
  type DatabaseTimeouts,
  DEFAULT_DATABASE_TIMEOUTS,
  QUERY_TIMEOUT_MARGIN_MS,
} from "./pool-timeouts.ts";
export {
  createPrismaIntentStore,
  PrismaIntentStore,
  type PrismaIntentStoreOptions,
} from "./prisma-intent-store.ts";
export * from "./queries/index.ts";
export {
  type AuditedAbortReport,
  auditedReport,
  type RunAbortAudit,
  type RunAbortAuditEntry,
  type RunAbortAuditResult,
} from "./run-abort-audit.ts";
export { createTestDatabase, type TestDatabase } from "./test-database.ts";
export { isTransientDatabaseError } from "./transient.ts";
export { type RunSql, startVacuumLoop, type VacuumLoop, vacuumDeadRows } from "./vacuum.ts";
