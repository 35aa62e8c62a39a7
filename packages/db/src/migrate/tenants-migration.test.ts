import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { withDatabase } from "@tristate/testing/postgres";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readDbEnv } from "../env.ts";
import { MIGRATIONS_DIR } from "../paths.ts";
import { readMigrationsList } from "./migrations.ts";

/**
 * The tenants migration (issue 10) on a database that holds rows written before tenants existed:
 * every row moves to `default`, the tenant then leads every key, and later writes must name theirs.
 */
describe("migration: tenants", () => {
  const admin = new pg.Client(readDbEnv().TRISTATE_TEST_DATABASE_URL);
  const name = `tristate_test_mig_${randomBytes(6).toString("hex")}`;
  let db: pg.Client;
  beforeAll(async () => {
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    db = new pg.Client(withDatabase(readDbEnv().TRISTATE_TEST_DATABASE_URL, name));
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  });

  it("moves existing records, events, plans, audit rows and keys to `default`; no default afterwards", async () => {
    const dirs = (await readMigrationsList()).migrationDirectories.map((d) => d.path);
    const at = dirs.findIndex((d) => d.endsWith("_tenants"));
    expect(at).toBeGreaterThan(0);
    const sql = (dir: string) => readFile(join(MIGRATIONS_DIR, dir, "migration.sql"), "utf8");
    for (const dir of dirs.slice(0, at)) await db.query(await sql(dir));

    await db.query(`INSERT INTO intent_records (key, run_id, step_id, tool, args, identity, status, attempt,
      deadline_at, version, created_at, updated_at) VALUES ('a6c763d983f2bfeb6708a2a2494a12de', 'run-7', 'step-3',
      'issue_refund', '{}', '{}', 'SUCCEEDED', 1, now(), 1, now(), now())`);
    await db.query(`INSERT INTO intent_events (key, type, at, data)
      VALUES ('a6c763d983f2bfeb6708a2a2494a12de', 'created', now(), '{}')`);
    await db.query(`INSERT INTO run_plans (run_id, steps, updated_at) VALUES ('run-7', '[]', now())`);
    await db.query(`INSERT INTO api_keys (id, name, role, hash, prefix, created_at)
      VALUES ('k1', 'old key', 'agent', 'h1', 'ts_agent_', now())`);
    await db.query(`INSERT INTO audit_entries (operator_action_id, actor_key_id, actor_name, at, action, note, key,
      tool, before, after) VALUES ('op-1', 'k1', 'old key', now(), 'confirm_effect', 'n',
      'a6c763d983f2bfeb6708a2a2494a12de', 'issue_refund', '{}', '{}')`);

    for (const dir of dirs.slice(at)) await db.query(await sql(dir));

    for (const table of ["intent_records", "intent_events", "run_plans", "api_keys", "audit_entries"]) {
      const { rows } = await db.query<{ tenant: string }>(`SELECT tenant FROM ${table}`);
      expect(rows, table).toStrictEqual([{ tenant: "default" }]);
    }
    // The tenant leads the primary key and every index of the log.
    const { rows: indexes } = await db.query<{ indexdef: string }>(
      "SELECT indexdef FROM pg_indexes WHERE tablename IN ('intent_records', 'intent_events', 'run_plans', 'audit_entries')",
    );
    // 12 before issue 14, which replaced (tenant, status, deadline) by (tenant, created_at, key) and five partial
    // ones, then dropped the compensated one (compensations are counted in the rollups), then added
    // (tenant, trace_id) and run_plans (tenant, updated_at); issue 22 added the GIN index on identity, the
    // one index not led by the tenant (GIN takes no btree column without btree_gin, which the embedded
    // database lacks): searchByIdentity checks the tenant on every row the index finds.
    expect(indexes.length).toBe(19);
    for (const { indexdef } of indexes) {
      if (indexdef.includes("intent_records_identity_idx")) expect(indexdef).toMatch(/USING gin \(identity\)/);
      else expect(indexdef).toMatch(/\(tenant[,)]/);
    }
    // Later writes of the log must name their tenant; keys made without one belong to `default`.
    await expect(
      db.query(`INSERT INTO run_plans (run_id, steps, updated_at) VALUES ('run-8', '[]', now())`),
    ).rejects.toThrow(/tenant/);
    await db.query(`INSERT INTO api_keys (id, name, role, hash, prefix, created_at)
      VALUES ('k2', 'new key', 'agent', 'h2', 'ts_agent_', now())`);
    const { rows: k2 } = await db.query("SELECT tenant FROM api_keys WHERE id = 'k2'");
    expect(k2).toStrictEqual([{ tenant: "default" }]);
  });
});
