import { describe, expect, it } from "vitest";
import { resolveDeadline } from "./api/calls/execute.ts";
import { type Arrival, NotInTimeError, preCallBoundMs, within } from "./arrival.ts";

const limits = { maxBudgetMs: 120_000, defaultBudgetMs: 30_000 };
/** A request that arrived `agoMs` ago. */
const arrivedAgo = (agoMs: number): Arrival => ({
  epochMs: Date.now() - agoMs,
  monotonicMs: performance.now() - agoMs,
});

describe("budgets count from the request's arrival (issue 21 §1)", () => {
  it("budgetMs: time before the procedure ran is part of it", () => {
    const deadline = resolveDeadline({ budgetMs: 10_000 }, arrivedAgo(4000), limits);
    expect(deadline.remainingMs()).toBeGreaterThan(5500);
    expect(deadline.remainingMs()).toBeLessThanOrEqual(6000);
  });

  it("the default budget too; a number is an arrival now", () => {
    expect(resolveDeadline({}, arrivedAgo(10_000), limits).remainingMs()).toBeLessThanOrEqual(20_000);
    expect(resolveDeadline({ budgetMs: 10_000 }, Date.now(), limits).remainingMs()).toBeGreaterThan(9500);
  });

  it("deadlineEpochMs is absolute; the cap counts from arrival", () => {
    const at = Date.now() + 200_000;
    const deadline = resolveDeadline({ deadlineEpochMs: at }, arrivedAgo(5000), limits);
    expect(deadline.epochMs).toBeLessThanOrEqual(Date.now() - 5000 + limits.maxBudgetMs + 5);
  });

  it("the key check's bound: the turn left minus the reserve, at least 200 ms", () => {
    const bound = preCallBoundMs(arrivedAgo(1000), { budgetMs: 10_000 }, limits, 2000);
    expect(bound).toBeGreaterThan(6500);
    expect(bound).toBeLessThanOrEqual(7000);
    expect(preCallBoundMs(arrivedAgo(0), { budgetMs: 1000 }, limits, 2000)).toBe(200);
    // A deadline given as epoch ms; an unusable hint counts as absent (the default budget).
    expect(preCallBoundMs(arrivedAgo(0), { deadlineEpochMs: Date.now() + 5000 }, limits, 2000)).toBeLessThanOrEqual(
      3000,
    );
    expect(preCallBoundMs(arrivedAgo(0), { budgetMs: -1 }, limits, 2000)).toBeGreaterThan(27_000);
  });

  it("within: the work's result in time, NotInTimeError after the bound", async () => {
    expect(await within(Promise.resolve(7), 100, "x")).toBe(7);
    const never = new Promise<never>(() => {});
    await expect(within(never, 20, "checking the API key")).rejects.toBeInstanceOf(NotInTimeError);
  });
});
