import { defineConfig } from "prisma/config";
import { readDbEnv } from "./src/env.ts";

/**
 * Prisma CLI configuration (Prisma 7 keeps the connection URL here, not in the schema).
 * The schema and migrations live in the repository's `/prisma` folder.
 */
export default defineConfig({
  schema: "../../prisma/schema.prisma",
  migrations: { path: "../../prisma/migrations" },
  datasource: { url: readDbEnv().DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/test" },
});
