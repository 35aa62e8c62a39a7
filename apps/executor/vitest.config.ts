import { defineConfig } from "vitest/config";
import { reporters } from "../../tooling/vitest-reporters.ts";

export default defineConfig({
  test: {
    ...reporters("executor"),
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 120_000,
  },
});
