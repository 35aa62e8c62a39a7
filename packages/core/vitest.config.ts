import { defineConfig } from "vitest/config";
import { reporters } from "../../tooling/vitest-reporters.ts";

export default defineConfig({
  test: {
    ...reporters("core"),
    include: ["src/**/*.test.ts", "test/**/*.test.ts", "examples/**/*.test.ts"],
    testTimeout: 30_000,
  },
});
