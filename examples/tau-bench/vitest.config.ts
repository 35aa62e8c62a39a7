import { defineConfig } from "vitest/config";
import { reporters } from "../../tooling/vitest-reporters.ts";

export default defineConfig({
  test: {
    ...reporters("tau-bench"),
    include: ["test/**/*.test.ts"],
    testTimeout: 120_000,
  },
});
