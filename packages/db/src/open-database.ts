import { type EmbeddedPostgres, startEmbeddedPostgres } from "./embedded-postgres.ts";
import { readDbEnv } from "./env.ts";
import type { TristateDatabase } from "./facade/ports.ts";
import { postgresDatabase } from "./facade/postgres-database.ts";
import { openMaintenancePrisma } from "./maintenance-prisma.ts";
import { applyMigrations } from "./migrate/migrations.ts";
import { DEFAULT_DATA_DIR } from "./paths.ts";
import type { DatabaseTimeouts } from "./pool-timeouts.ts";
import { PrismaIntentStore } from "./prisma-intent-store.ts";

/** Options of {@link openDatabase}. */
export interface OpenDatabaseOptions {
  /** PostgreSQL to use; default `DATABASE_URL`; when neither is set, the embedded database. */
  databaseUrl?: string;
  /** Use the embedded database even when `DATABASE_URL` is set. */
  embedded?: boolean;
  /** Embedded data folder (or `memory://`); default `TRISTATE_DATA_DIR`, else `.tristate/pgdata` in the repo. */
  dataDir?: string;
  /** Apply pending migrations on open. Default true. */
  migrate?: boolean;
  /** Connections of the store's pool (ignored when embedded: one session). @default 10 */
  poolSize?: number;
  /** Time limits of the store's pool (pool-timeouts.ts). @default DEFAULT_DATABASE_TIMEOUTS */
  timeouts?: Partial<DatabaseTimeouts>;
}

/**
 * An open intent log: the {@link TristateDatabase} facade the service is typed to, plus the PostgreSQL
 * store itself (the `default` tenant's; what an embedder passes to `createExecutor`) and its URL.
 */
export interface OpenDatabase extends TristateDatabase {
  /** The `default` tenant's PostgreSQL store (`intents(tenant)` gives the same log as the `IntentStore` port). */
  store: PrismaIntentStore;
  /** `postgresql://` URL (for the embedded database: its loopback socket, valid until `close`). */
  url: string;
  /** True when this is the embedded PGlite database. */
  embedded: boolean;
  /** Closes the store and, when embedded, stops the database. Idempotent. */
  close(): Promise<void>;
}

/**
 * Opens the intent log the service and demo use: the PostgreSQL at `databaseUrl` / `DATABASE_URL`, or
 * else an embedded PostgreSQL (PGlite) in a data folder, served on a loopback socket so the same
 * `pg` / `@prisma/adapter-pg` code talks to it. Migrations are applied on open.
 * @throws when the database is unreachable, the data folder is held by another process, or a migration fails.
 */
export async function openDatabase(options: OpenDatabaseOptions = {}): Promise<OpenDatabase> {
  const env = readDbEnv();
  const databaseUrl = options.embedded ? undefined : (options.databaseUrl ?? env.DATABASE_URL);
  const embedded: EmbeddedPostgres | undefined = databaseUrl
    ? undefined
    : await startEmbeddedPostgres(options.dataDir ?? env.TRISTATE_DATA_DIR ?? DEFAULT_DATA_DIR);
  const url = databaseUrl ?? embedded!.url;
  try {
    if (options.migrate !== false) await applyMigrations(url);
  } catch (error) {
    await embedded?.close();
    throw error;
  }
  const store = new PrismaIntentStore({
    databaseUrl: url,
    singleSession: embedded !== undefined,
    ...(options.poolSize === undefined ? {} : { poolSize: options.poolSize }),
    ...(options.timeouts === undefined ? {} : { timeouts: options.timeouts }),
  });
  // Long maintenance on a pool of its own (a server only: the embedded database has one session).
  const maintenance = embedded ? undefined : openMaintenancePrisma(url, options.timeouts);
  const database = postgresDatabase(store, {
    embedded: embedded !== undefined,
    ...(maintenance ? { maintenancePrisma: maintenance.prisma } : {}),
    async close() {
      await maintenance?.close();
      await store.close();
      await embedded?.close();
    },
  });
  return { ...database, store, url };
}
