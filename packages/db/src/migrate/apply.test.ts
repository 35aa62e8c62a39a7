import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readDbEnv } from "../env.ts";
import { withDatabase } from "../test-database.ts";
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
    let retries = 0;
    for (let round = 0; round < 8; round++) {
      const { name, url } = await fresh();
      const applying = applyMigrations(url, {}, { retryForMs: 30_000, onRetry: () => retries++ });
      // Kill its backend a few times while it works.
      for (let k = 0; k < 3; k++) {
        await new Promise((r) => setTimeout(r, 20 + Math.random() * 250));
        await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", [name]);
      }
      await applying;
      const rows = await history(url);
      expect(rows.map((r) => r.migration_name)).toStrictEqual(names);
      expect(rows.every((r) => r.finished)).toBe(true);
      expect((await diffToSchema(url, "database")).empty).toBe(true);
    }
    expect(retries).toBeGreaterThan(0);
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
