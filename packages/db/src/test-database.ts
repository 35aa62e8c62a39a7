import { createHash, randomBytes } from "node:crypto";
import pg from "pg";
import { parseIntoClientConfig } from "pg-connection-string";
import { readDbEnv } from "./env.ts";
import { applyMigrations, readMigrationsList } from "./migrate/migrations.ts";

/** Arbitrary constant of the advisory lock that serialises template creation across test processes. */
const TEMPLATE_LOCK = 7_415_926_535;
const TEMPLATE_PREFIX = "tristate_template_";

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

/** The template's name: a hash of the migrations, so a changed migration gets a new template. */
async function templateName(): Promise<string> {
  const list = await readMigrationsList();
  const hash = createHash("sha256");
  for (const dir of list.migrationDirectories) {
    hash.update(dir.path);
    hash.update(dir.migrationFile.content.value);
  }
  return TEMPLATE_PREFIX + hash.digest("hex").slice(0, 12);
}

/**
 * Creates (once per set of migrations) the migrated template database, under an advisory lock so
 * parallel test files never race; built under a temporary name and renamed, so a crash mid-way never
 * leaves a half-migrated template. Older templates are dropped.
 */
async function ensureTemplate(admin: pg.Client, adminUrl: string): Promise<string> {
  const name = await templateName();
  await admin.query("SELECT pg_advisory_lock($1)", [TEMPLATE_LOCK]);
  try {
    const { rows } = await admin.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE $1", [
      `${TEMPLATE_PREFIX}%`,
    ]);
    if (rows.some((r) => r.datname === name)) return name;
    for (const r of rows) await admin.query(`DROP DATABASE IF EXISTS "${r.datname}" WITH (FORCE)`);
    const building = `${name}_building`;
    await admin.query(`CREATE DATABASE "${building}"`);
    await applyMigrations(withDatabase(adminUrl, building));
    await admin.query(`ALTER DATABASE "${building}" RENAME TO "${name}"`);
    return name;
  } finally {
    await admin.query("SELECT pg_advisory_unlock($1)", [TEMPLATE_LOCK]);
  }
}

/**
 * Creates a fresh database cloned from the migrated template (`CREATE DATABASE … TEMPLATE`, a few ms),
 * on the server of `TRISTATE_TEST_DATABASE_URL` (default: the local PostgreSQL). Call `drop()` after.
 * @param adminUrl - a server where the user may create databases; default from the environment.
 * @throws when the server is unreachable or the migrations fail.
 */
export async function createTestDatabase(
  adminUrl: string = readDbEnv().TRISTATE_TEST_DATABASE_URL,
): Promise<TestDatabase> {
  const admin = new pg.Client(parseIntoClientConfig(adminUrl));
  await admin.connect();
  try {
    const template = await ensureTemplate(admin, adminUrl);
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
