import { describe, expect, it } from "vitest";
import { executorHealth, fetchExecutor, noteExecutorReachable, noteExecutorUnreachable } from "./executor-health";

describe("executor health (the outage banner's 'since')", () => {
  it("keeps the first failure's time until a call reaches the executor again", () => {
    noteExecutorReachable(1_000);
    expect(executorHealth()).toMatchObject({ up: true, downSinceEpochMs: null });
    noteExecutorUnreachable(2_000);
    noteExecutorUnreachable(5_000);
    expect(executorHealth()).toStrictEqual({ up: false, downSinceEpochMs: 2_000, checkedAtEpochMs: 5_000 });
    noteExecutorReachable(6_000);
    expect(executorHealth()).toStrictEqual({ up: true, downSinceEpochMs: null, checkedAtEpochMs: 6_000 });
  });

  it("a refused connection counts as unreachable", async () => {
    noteExecutorReachable();
    await expect(fetchExecutor("http://127.0.0.1:9/healthz", {}, 2_000)).rejects.toThrow();
    expect(executorHealth().up).toBe(false);
  });
});
