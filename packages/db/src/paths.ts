import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** Absolute path of the repository root (the folder holding `/prisma`). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

/** Absolute path of the Prisma schema, the source of truth for the tables. */
export const SCHEMA_PATH = join(REPO_ROOT, "prisma", "schema.prisma");

/** Absolute path of the migrations folder (`<timestamp>_<name>/migration.sql` + `migration_lock.toml`). */
export const MIGRATIONS_DIR = join(REPO_ROOT, "prisma", "migrations");

/** Default data folder of the embedded database, used when `TRISTATE_DATA_DIR` is not set. */
export const DEFAULT_DATA_DIR = join(REPO_ROOT, ".tristate", "pgdata");
