import { FakeClock } from "@tristate/testing";
import { describe, expect, it } from "vitest";
import { Deadline } from "./deadline.ts";
import { DeadlineExceededError, isDeadlineExceededError } from "./errors.ts";

describe("Deadline", () => {
  it("after(ms): remaining counts down on the monotonic clock; epochMs is absolute", () => {
    const clock = new FakeClock(1_000_000);
    const d = Deadline.after(45_000, clock);
    expect(d.epochMs).toBe(1_045_000);
    clock.advance(28_000);
    expect(d.remainingMs()).toBe(17_000);
    clock.advance(20_000);
    expect(d.remainingMs()).toBe(0);
    expect(d.expired()).toBe(true);
  });

  it("at(epochMs) is equivalent to after(epochMs - now)", () => {
    const clock = new FakeClock(5_000);
    expect(Deadline.at(12_000, clock).remainingMs()).toBe(7_000);
    expect(Deadline.at(1_000, clock).remainingMs()).toBe(0);
  });

  it("timeoutFor: the smaller of the tool's timeout and what is left minus the reserve", () => {
    const clock = new FakeClock();
    const d = Deadline.after(45_000, clock);
    expect(d.timeoutFor(30_000)).toBe(30_000);
    clock.advance(20_000);
    expect(d.timeoutFor(30_000)).toBe(23_000);
    expect(d.timeoutFor(30_000, 0)).toBe(25_000);
  });

  it("timeoutFor refuses to start with less than 1000 ms left after the reserve", () => {
    const clock = new FakeClock();
    const d = Deadline.after(2999, clock);
    expect(() => d.timeoutFor(30_000)).toThrow(DeadlineExceededError);
    try {
      d.timeoutFor(30_000);
    } catch (e) {
      expect(isDeadlineExceededError(e)).toBe(true);
      expect((e as DeadlineExceededError).requiredMs).toBe(1000);
    }
    expect(Deadline.after(3000, clock).timeoutFor(30_000)).toBe(1000);
  });

  it("a budget of 0 or less is no budget, never no deadline", () => {
    const clock = new FakeClock();
    expect(() => Deadline.after(0, clock).timeoutFor(1000)).toThrow(DeadlineExceededError);
    expect(() => Deadline.after(-5, clock).timeoutFor(1000)).toThrow(DeadlineExceededError);
  });

  it("epochMs is whole ms, never later than asked (it is persisted and forwarded as an integer header)", () => {
    const before = Date.now();
    const after = Deadline.after(1234.7);
    expect(Number.isInteger(after.epochMs)).toBe(true);
    expect(after.epochMs).toBeLessThanOrEqual(Date.now() + 1234.7);
    expect(after.epochMs).toBeGreaterThanOrEqual(before + 1234);
    expect(Deadline.at(1796194535380.318).epochMs).toBe(1796194535380);
  });

  it("rejects non-finite input", () => {
    expect(() => Deadline.after(Number.NaN)).toThrow(/finite/);
    expect(() => Deadline.at(Number.POSITIVE_INFINITY)).toThrow(/finite/);
  });
});
