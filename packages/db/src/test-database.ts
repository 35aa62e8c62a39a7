import { createHash } from "node:crypto";
import type { TestDatabase } from "@tristate/testing/postgres";
import { readDbEnv } from "./env.ts";
import { applyMigrations, readMigrationsList } from "./migrate/migrations.ts";

export type { TestDatabase };

/** SHA-256 (hex) of the migrations' folder names and SQL: a changed migration changes it. */
async function migrationsFingerprint(): Promise<string> {
  const list = await readMigrationsList();
  const hash = createHash("sha256");
  for (const dir of list.migrationDirectories) {
    hash.update(dir.path);
    hash.update(dir.migrationFile.content.value);
  }
  return hash.digest("hex");
}

/**
 * A fresh database with Tristate's migrations applied, cloned from a template migrated once per set
 * of migrations, on the server of `TRISTATE_TEST_DATABASE_URL` (default: the local PostgreSQL). Call
 * `drop()` after. For tests, benches and local stacks: the mechanics are the dev-only
 * `@tristate/testing/postgres`, loaded only when this is called (production never loads it), so it
 * needs that package installed (a dev dependency in this repository).
 * @param adminUrl - a server where the user may create databases; default from the environment.
 * @throws when the server is unreachable or the migrations fail.
 */
export async function createTestDatabase(
  adminUrl: string = readDbEnv().TRISTATE_TEST_DATABASE_URL,
): Promise<TestDatabase> {
  const { createTemplateDatabase } = await import("@tristate/testing/postgres");
  return createTemplateDatabase(
    {
      fingerprint: migrationsFingerprint,
      migrate: async (url) => {
        await applyMigrations(url);
      },
    },
    adminUrl,
  );
}
