/**
 * `pnpm --filter @tristate/db run migrate` — apply pending migrations to `DATABASE_URL`, or to the
 * embedded database when it is not set.
 * `pnpm --filter @tristate/db run migrate:new <name>` — write the next migration from the diff
 * between `prisma/migrations` and `prisma/schema.prisma` (a temporary shadow database is created on
 * `DATABASE_URL`, else on `TRISTATE_TEST_DATABASE_URL`, the local PostgreSQL).
 */
import { startEmbeddedPostgres } from "../embedded-postgres.ts";
import { readDbEnv } from "../env.ts";
import { DEFAULT_DATA_DIR } from "../paths.ts";
import { applyMigrations, createMigration } from "./migrations.ts";

async function main(argv: string[]): Promise<number> {
  const env = readDbEnv();
  const [command, name] = argv;
  if (command === "apply") {
    const embedded = env.DATABASE_URL
      ? undefined
      : await startEmbeddedPostgres(env.TRISTATE_DATA_DIR ?? DEFAULT_DATA_DIR);
    try {
      const applied = await applyMigrations(env.DATABASE_URL ?? embedded!.url);
      const where = embedded ? `embedded database at ${embedded.dataDir}` : "DATABASE_URL";
      console.log(applied.length ? `Applied to ${where}: ${applied.join(", ")}` : `${where} is up to date.`);
      return 0;
    } finally {
      await embedded?.close();
    }
  }
  if (command === "new" && name) {
    const dir = await createMigration(name, env.DATABASE_URL ?? env.TRISTATE_TEST_DATABASE_URL);
    console.log(dir ? `Wrote ${dir}/migration.sql` : "No schema changes: no migration written.");
    return 0;
  }
  console.error("usage: cli.ts apply | cli.ts new <snake_case_name>");
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
