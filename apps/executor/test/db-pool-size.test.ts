/**
 * The service's database pool is a setting (`TRISTATE_DB_POOL_SIZE`, issue 19 §4): 40 by default as
 * before, validated like every setting, and passed through the facade to the pool.
 */
import { describe, expect, it } from "vitest";
import { readEnv } from "../src/env.ts";
import { startStack } from "./support.ts";

describe("TRISTATE_DB_POOL_SIZE", () => {
  it("defaults to 40 (also when empty) and refuses what is not 1–1000", () => {
    expect(readEnv({}).TRISTATE_DB_POOL_SIZE).toBe(40);
    expect(readEnv({ TRISTATE_DB_POOL_SIZE: "" }).TRISTATE_DB_POOL_SIZE).toBe(40);
    expect(readEnv({ TRISTATE_DB_POOL_SIZE: "8" }).TRISTATE_DB_POOL_SIZE).toBe(8);
    for (const bad of ["0", "1001", "2.5", "many"]) {
      expect(() => readEnv({ TRISTATE_DB_POOL_SIZE: bad })).toThrow(/TRISTATE_DB_POOL_SIZE/);
    }
  });

  it("sizes the service's pool", async () => {
    const stack = await startStack({ env: { TRISTATE_DB_POOL_SIZE: "7" } });
    try {
      expect(stack.service.services.store.pool.options.max).toBe(7);
      const ready = await fetch(`${stack.service.url}/readyz`);
      expect(ready.status).toBe(200);
    } finally {
      await stack.close();
    }
  });
});
