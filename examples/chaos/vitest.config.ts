import { defineConfig } from "vitest/config";
import { reporters } from "../../tooling/vitest-reporters.ts";

export default defineConfig({
  test: {
    ...reporters("chaos"),
    include: ["test/**/*.test.ts"],
  },
});
