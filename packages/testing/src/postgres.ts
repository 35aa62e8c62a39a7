import { randomBytes } from "node:crypto";
import pg from "pg";
import { parseIntoClientConfig } from "pg-connection-string";

/** Arbitrary constant of the advisory lock that serialises template creation across test processes. */
const TEMPLATE_LOCK = 7_415_926_535;
const TEMPLATE_PREFIX = "tristate_template_";

/**
 * `@tristate/testing/postgres`: a fresh PostgreSQL database per test file, cloned in a few ms from a
 * template migrated once per set of migrations, and dropped after. Schema-agnostic: the caller says
 * how to migrate (`@tristate/db`'s `createTestDatabase` passes Tristate's migrations). Dev-only.
 *
 * @example
 * ```ts
 * import { createTemplateDatabase } from "@tristate/testing/postgres";
 *
 * const db = await createTemplateDatabase({ fingerprint: hashMyMigrations, migrate: applyMyMigrations }, adminUrl);
 * try { await runTests(db.url); } finally { await db.drop(); }
 * ```
 * @module
 */

/** What a test database is made from. */
export interface TestDatabaseSchema {
  /** A hex digest of the migrations (e.g. SHA-256 of their files): a changed one gets a new template. */
  fingerprint(): Promise<string>;
  /**
   * Applies the migrations to the empty database at `url` (a `postgresql://` URL).
   * @throws when a migration fails.
   */
  migrate(url: string): Promise<void>;
}

/** A fresh, migrated database of its own, and how to drop it. */
export interface TestDatabase {
  /** `postgresql://` URL of the new database. */
  url: string;
  /** The database's name (`tristate_test_<hex>`). */
  name: string;
  /** Drops the database (terminating any session left on it). Idempotent. */
  drop(): Promise<void>;
}

/** `url` with its database name replaced by `database`. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/**
 * The template's name: the schema's fingerprint, so a changed migration gets a new template.
 * @throws TypeError when the fingerprint is not a hex digest (12 hex digits at least).
 */
async function templateName(schema: TestDatabaseSchema): Promise<string> {
  const fingerprint = await schema.fingerprint();
  if (!/^[0-9a-f]{12,}$/.test(fingerprint)) {
    throw new TypeError(`createTemplateDatabase: fingerprint must be a hex digest, got ${JSON.stringify(fingerprint)}`);
  }
  return TEMPLATE_PREFIX + fingerprint.slice(0, 12);
}

/**
 * Creates (once per set of migrations) the migrated template database, under an advisory lock so
 * parallel test files never race; built under a temporary name and renamed, so a crash mid-way never
 * leaves a half-migrated template. Older templates are dropped.
 */
async function ensureTemplate(admin: pg.Client, adminUrl: string, schema: TestDatabaseSchema): Promise<string> {
  const name = await templateName(schema);
  await admin.query("SELECT pg_advisory_lock($1)", [TEMPLATE_LOCK]);
  try {
    const { rows } = await admin.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE $1", [
      `${TEMPLATE_PREFIX}%`,
    ]);
    if (rows.some((r) => r.datname === name)) return name;
    for (const r of rows) await admin.query(`DROP DATABASE IF EXISTS "${r.datname}" WITH (FORCE)`);
    const building = `${name}_building`;
    await admin.query(`CREATE DATABASE "${building}"`);
    await schema.migrate(withDatabase(adminUrl, building));
    await admin.query(`ALTER DATABASE "${building}" RENAME TO "${name}"`);
    return name;
  } finally {
    await admin.query("SELECT pg_advisory_unlock($1)", [TEMPLATE_LOCK]);
  }
}

/**
 * Creates a fresh database cloned from the migrated template (`CREATE DATABASE … TEMPLATE`, a few ms),
 * on the server of `adminUrl`. Call `drop()` after.
 * @param schema - how to migrate the template (once per fingerprint).
 * @param adminUrl - a `postgresql://` URL of a server where the user may create databases.
 * @throws when the server is unreachable or the migrations fail.
 */
export async function createTemplateDatabase(schema: TestDatabaseSchema, adminUrl: string): Promise<TestDatabase> {
  const admin = new pg.Client(parseIntoClientConfig(adminUrl));
  await admin.connect();
  try {
    const template = await ensureTemplate(admin, adminUrl, schema);
    const name = `tristate_test_${randomBytes(8).toString("hex")}`;
    // Another CREATE DATABASE from the same template may briefly hold it; retry on "being accessed".
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
        break;
      } catch (error) {
        if (attempt >= 50 || !/being accessed by other users/.test(String(error))) throw error;
        await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 40));
      }
    }
    let dropped = false;
    return {
      name,
      url: withDatabase(adminUrl, name),
      async drop() {
        if (dropped) return;
        dropped = true;
        const client = new pg.Client(parseIntoClientConfig(adminUrl));
        await client.connect();
        try {
          await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        } finally {
          await client.end();
        }
      },
    };
  } finally {
    await admin.end();
  }
}
