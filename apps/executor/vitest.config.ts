import { defineConfig } from "vitest/config";
import { reporters } from "../../tooling/vitest-reporters.ts";

/**
 * Two projects, both run by `pnpm test` (`vitest run`): `module` — tests beside their source (`src/`)
 * — and `integration` — the tests in `test/` that run the service for real: its HTTP API and MCP
 * gateway on a PostgreSQL test database, catalogs against loopback remotes, child processes.
 * `pnpm test:integration` runs the second alone (`vitest run --project integration`).
 */
export default defineConfig({
  test: {
    ...reporters("executor"),
    testTimeout: 120_000,
    projects: [
      { extends: true, test: { name: "module", include: ["src/**/*.test.ts"] } },
      { extends: true, test: { name: "integration", include: ["test/**/*.test.ts"] } },
    ],
  },
});
