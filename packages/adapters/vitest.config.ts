import { defineConfig } from "vitest/config";
import { reporters } from "../../tooling/vitest-reporters.ts";

export default defineConfig({
  test: {
    ...reporters("adapters"),
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
