import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readDbEnv } from "../env.ts";
import { createTestDatabase, type TestDatabase } from "../test-database.ts";
import { applyMigrations, diffToSchema, readMigrationsList } from "./migrations.ts";

describe("migrations (Prisma's WebAssembly schema engine)", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("the migrated database matches prisma/schema.prisma (empty diff)", async () => {
    const diff = await diffToSchema(db.url, "database");
    expect(diff.script).not.toMatch(/CREATE|ALTER|DROP/);
    expect(diff.empty).toBe(true);
  });

  it("the migrations folder, replayed on a shadow database, matches the schema", async () => {
    const diff = await diffToSchema(readDbEnv().TRISTATE_TEST_DATABASE_URL, "migrations");
    expect(diff.empty).toBe(true);
    const admin = new pg.Client(readDbEnv().TRISTATE_TEST_DATABASE_URL);
    await admin.connect();
    const { rows } = await admin.query("SELECT 1 FROM pg_database WHERE datname LIKE 'prisma_migrate_shadow_db_%'");
    await admin.end();
    expect(rows).toHaveLength(0);
  });

  it("keeps Prisma's _prisma_migrations table, and applying again is a no-op", async () => {
    const client = new pg.Client(db.url);
    await client.connect();
    try {
      const { rows } = await client.query<{ migration_name: string; finished_at: Date | null }>(
        "SELECT migration_name, finished_at FROM _prisma_migrations ORDER BY migration_name",
      );
      const names = (await readMigrationsList()).migrationDirectories.map((d) => d.path);
      expect(rows.map((r) => r.migration_name)).toStrictEqual(names);
      expect(rows.every((r) => r.finished_at !== null)).toBe(true);
      expect(await applyMigrations(db.url)).toStrictEqual([]);
    } finally {
      await client.end();
    }
  });

  it("a drifted database is reported as different", async () => {
    const client = new pg.Client(db.url);
    await client.connect();
    try {
      await client.query("DROP INDEX intent_records_tool_created_idx");
    } finally {
      await client.end();
    }
    const diff = await diffToSchema(db.url, "database");
    expect(diff.empty).toBe(false);
    expect(diff.script).toContain("intent_records_tool_created_idx");
  });
});
