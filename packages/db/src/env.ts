import { z } from "zod";

/** The PostgreSQL server this machine always has (DESIGN.md "Environment facts"). */
export const LOCAL_POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/test";

const emptyAsUndefined = (value: unknown): unknown => (value === "" ? undefined : value);

const envSchema = z.object({
  /** The PostgreSQL to use; absent: the embedded PGlite database. */
  DATABASE_URL: z.preprocess(emptyAsUndefined, z.string().min(1).optional()),
  /** Data folder of the embedded database; default `.tristate/pgdata` under the repository root. */
  TRISTATE_DATA_DIR: z.preprocess(emptyAsUndefined, z.string().min(1).optional()),
  /** A server where tests may create and drop their own databases. */
  TRISTATE_TEST_DATABASE_URL: z.preprocess(emptyAsUndefined, z.string().min(1).default(LOCAL_POSTGRES_URL)),
});

/** The db package's settings, read from the environment in this one place. */
export type DbEnv = z.infer<typeof envSchema>;

/**
 * Reads and validates the db package's environment variables.
 * @param source - the variables to read; default `process.env`.
 * @throws z.ZodError when a variable is malformed.
 */
export function readDbEnv(source: NodeJS.ProcessEnv = process.env): DbEnv {
  return envSchema.parse(source);
}
