import { randomBytes } from "node:crypto";
import { withDatabase } from "@tristate/testing/postgres";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readDbEnv } from "../env.ts";
import { applyMigrationScripts } from "./apply.ts";
import { applyMigrations, diffToSchema, readMigrationsList } from "./migrations.ts";

/**
 * Start-up migrations under crashes (issue 12): each migration commits together with its history row,
 * so a connection terminated at any moment leaves the database at a migration boundary, and the
 * retry (with backoff) carries on from there: never a half-applied migration marked failed.
 */
describe("applyMigrations: atomic per migration, retried on transient failures", () => {
  const admin = new pg.Client(readDbEnv().TRISTATE_TEST_DATABASE_URL);
  const made: string[] = [];
  const fresh = async () => {
    const name = `tristate_test_apply_${randomBytes(6).toString("hex")}`;
    await admin.query(`CREATE DATABASE "${name}"`);
    made.push(name);
    return { name, url: withDatabase(readDbEnv().TRISTATE_TEST_DATABASE_URL, name) };
  };
  const history = async (url: string) => {
    const c = new pg.Client(url);
    await c.connect();
    try {
      return (
        await c.query<{ migration_name: string; finished: boolean }>(
          "SELECT migration_name, finished_at IS NOT NULL AS finished FROM _prisma_migrations ORDER BY migration_name",
        )
      ).rows;
    } finally {
      await c.end();
    }
  };
  let names: string[];
  beforeAll(async () => {
    await admin.connect();
    names = (await readMigrationsList()).migrationDirectories.map((d) => d.path);
  });
  afterAll(async () => {
    for (const name of made) await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  });

  it("its connection terminated again and again at random moments: it ends fully migrated, every row finished, no drift", async () => {
    // Slow migrations (each sleeps 150 ms inside its transaction), so the kills land mid-migration.
    const scripts = Array.from({ length: 5 }, (_, i) => ({
      name: `2026000000000${i}_slow_${i}`,
      sql: `CREATE TABLE slow_${i} (id int PRIMARY KEY); SELECT pg_sleep(0.15);`,
    }));
    let retries = 0;
    for (let round = 0; round < 4; round++) {
      const { name, url } = await fresh();
      const applying = applyMigrationScripts(url, scripts, { retryForMs: 30_000, onRetry: () => retries++ });
      for (let k = 0; k < 3; k++) {
        await new Promise((r) => setTimeout(r, 60 + Math.random() * 200));
        await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", [name]);
      }
      await applying;
      const rows = await history(url);
      expect(rows.map((r) => r.migration_name)).toStrictEqual(scripts.map((m) => m.name));
      expect(rows.every((r) => r.finished)).toBe(true);
      const c = new pg.Client(url);
      await c.connect();
      const { rows: tables } = await c.query("SELECT count(*)::int AS n FROM pg_tables WHERE tablename LIKE 'slow_%'");
      await c.end();
      expect(tables[0].n).toBe(scripts.length);
    }
    expect(retries).toBeGreaterThan(0);
    // And the real migrations end with no drift.
    const { url } = await fresh();
    await applyMigrations(url);
    expect((await history(url)).map((r) => r.migration_name)).toStrictEqual(names);
    expect((await diffToSchema(url, "database")).empty).toBe(true);
  }, 120_000);

  it("replicas starting together: each migration is applied once", async () => {
    const { url } = await fresh();
    const runs = await Promise.all([applyMigrations(url), applyMigrations(url), applyMigrations(url)]);
    expect(runs.flat().sort()).toStrictEqual([...names].sort());
    expect((await history(url)).map((r) => r.migration_name)).toStrictEqual(names);
  });

  it("a failed migration left by another tool is refused with what to do; nothing applied", async () => {
    const { url } = await fresh();
    const c = new pg.Client(url);
    await c.connect();
    await applyMigrations(url);
    await c.query(
      "INSERT INTO _prisma_migrations (id, checksum, migration_name, started_at) VALUES ('x', 'y', '29991231000000_half', now())",
    );
    await c.end();
    await expect(applyMigrations(url)).rejects.toThrow(
      /29991231000000_half is recorded as failed.*prisma migrate resolve/,
    );
  });

  it("an unreachable database is retried until retryForMs, then the error is thrown", async () => {
    const started = Date.now();
    await expect(
      applyMigrations("postgresql://postgres@127.0.0.1:1/nowhere", {}, { retryForMs: 700 }),
    ).rejects.toMatchObject({ code: "ECONNREFUSED" });
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  });
});
