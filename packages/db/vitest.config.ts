import { defineConfig } from "vitest/config";
import { reporters } from "../../tooling/vitest-reporters.ts";

/**
 * Two projects, both run by `pnpm test` (`vitest run`): `module` — each store module's tests beside
 * its source (`src/`, on a fresh test database or embedded PGlite) — and `integration` — the tests in
 * `test/` that put the parts together on a real PostgreSQL server: racing executors, crash recovery in
 * child processes, cooperating sweepers, sagas, the dashboard's reads. `pnpm test:integration` runs
 * the second alone (`vitest run --project integration`).
 */
export default defineConfig({
  test: {
    ...reporters("db"),
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      { extends: true, test: { name: "module", include: ["src/**/*.test.ts"] } },
      { extends: true, test: { name: "integration", include: ["test/**/*.test.ts"] } },
    ],
  },
});
