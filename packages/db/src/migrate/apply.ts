import { createHash, randomUUID } from "node:crypto";
import pg from "pg";
import { parseIntoClientConfig } from "pg-connection-string";
import { isTransientDatabaseError } from "../transient.ts";

/** One migration of the folder, in order: its directory name and its SQL. */
export interface MigrationScript {
  name: string;
  sql: string;
}

/** Options of {@link applyMigrationScripts}. */
export interface ApplyOptions {
  /**
   * How long to keep retrying after transient failures (the server restarting, the connection
   * terminated mid-migration), ms. Backoff doubles from 100 ms up to 5 s. @default 60000
   */
  retryForMs?: number;
  /** Called before each retry (logging). */
  onRetry?(error: unknown, attempt: number, delayMs: number): void;
}

/** Prisma's own history table, created the way `prisma migrate deploy` creates it. */
const HISTORY_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
  "id"                  VARCHAR(36) PRIMARY KEY NOT NULL,
  "checksum"            VARCHAR(64) NOT NULL,
  "finished_at"         TIMESTAMPTZ,
  "migration_name"      VARCHAR(255) NOT NULL,
  "logs"                TEXT,
  "rolled_back_at"      TIMESTAMPTZ,
  "started_at"          TIMESTAMPTZ NOT NULL DEFAULT now(),
  "applied_steps_count" INTEGER NOT NULL DEFAULT 0
)`;

/** Key of the session advisory lock that serialises replicas migrating one database at once. */
const MIGRATION_LOCK_KEY = 7_261_130_044_240;

/** The checksum Prisma records for a migration: SHA-256 hex of its file. */
export function migrationChecksum(sql: string): string {
  return createHash("sha256").update(sql, "utf8").digest("hex");
}

/**
 * Applies the migrations not yet applied, each in one transaction together with its row in Prisma's
 * `_prisma_migrations` table (PostgreSQL's DDL is transactional): a migration is applied and
 * recorded, or neither. Prisma's own engine runs a script and records it separately, so a connection
 * terminated in between left a half-applied migration marked failed, and every later start refused
 * (P3009) — issue 12. Replicas starting together take turns on an advisory lock. Transient failures
 * (see `isTransientDatabaseError`) are retried with backoff for `retryForMs`; each retry resumes
 * after the last migration that committed.
 * @returns the names of the migrations applied now.
 * @throws when a migration's SQL fails, when an applied migration's file was changed since
 *   (checksum), when the history holds a failed migration (written by Prisma's CLI), or when
 *   transient failures outlast `retryForMs`.
 */
export async function applyMigrationScripts(
  databaseUrl: string,
  scripts: readonly MigrationScript[],
  options: ApplyOptions = {},
): Promise<string[]> {
  const retryForMs = options.retryForMs ?? 60_000;
  const until = Date.now() + retryForMs;
  const applied: string[] = [];
  for (let attempt = 1; ; attempt++) {
    try {
      await applyOnce(databaseUrl, scripts, applied);
      return applied;
    } catch (error) {
      const delayMs = Math.min(5000, 100 * 2 ** (attempt - 1));
      if (!isTransientDatabaseError(error) || Date.now() + delayMs > until) throw error;
      options.onRetry?.(error, attempt, delayMs);
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}

async function applyOnce(databaseUrl: string, scripts: readonly MigrationScript[], applied: string[]): Promise<void> {
  const client = new pg.Client(parseIntoClientConfig(databaseUrl));
  client.on("error", () => {}); // a terminated connection also rejects the query in flight
  await client.connect();
  try {
    // The lock first: even CREATE TABLE IF NOT EXISTS races another session's (pg_type is unique).
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
    await client.query(HISTORY_TABLE);
    const { rows } = await client.query<{ migration_name: string; checksum: string; finished: boolean }>(
      `SELECT migration_name, checksum, finished_at IS NOT NULL AS finished FROM _prisma_migrations
       WHERE rolled_back_at IS NULL`,
    );
    const failed = rows.find((r) => !r.finished);
    if (failed) {
      throw new Error(
        `migration ${failed.migration_name} is recorded as failed in _prisma_migrations (left by an earlier tool); ` +
          "check the database by hand and resolve it (`prisma migrate resolve`) before starting",
      );
    }
    const done = new Map(rows.map((r) => [r.migration_name, r.checksum]));
    for (const script of scripts) {
      const checksum = migrationChecksum(script.sql);
      const recorded = done.get(script.name);
      if (recorded !== undefined) {
        if (recorded !== checksum)
          throw new Error(`migration ${script.name} was changed after it was applied (checksum differs)`);
        continue;
      }
      await client.query("BEGIN");
      try {
        await client.query(script.sql);
        await client.query(
          `INSERT INTO _prisma_migrations (id, checksum, finished_at, migration_name, started_at, applied_steps_count)
           VALUES ($1, $2, clock_timestamp(), $3, now(), 1)`,
          [randomUUID(), checksum, script.name],
        );
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        if (!isTransientDatabaseError(error)) {
          throw new Error(`migration ${script.name} failed: ${error instanceof Error ? error.message : error}`, {
            cause: error,
          });
        }
        throw error;
      }
      applied.push(script.name);
    }
  } finally {
    await client.end().catch(() => {});
  }
}
