import { type Clock, systemClock } from "./clock.ts";
import { DeadlineExceededError } from "./errors.ts";

/** Least time (ms) a call must have after the reserve, or it is refused before sending. Source design: `left < 1.0`. */
export const MIN_CALL_BUDGET_MS = 1000;
/** Default reserve (ms) kept so the agent can still report what happened. Source design: `reserve=2.0`. */
export const DEFAULT_RESERVE_MS = 2000;

/**
 * One absolute deadline per agent turn, passed to every tool call (source design: "Deadlines: one
 * budget from the turn down to the socket"). Measured on a monotonic clock inside; exposed as an
 * absolute epoch-ms value for persistence and for forwarding to remotes.
 */
export class Deadline {
  /** The deadline as epoch ms (for persistence and the forwarded header). */
  readonly epochMs: number;
  readonly #atMonotonicMs: number;
  readonly #clock: Clock;

  private constructor(epochMs: number, atMonotonicMs: number, clock: Clock) {
    this.epochMs = epochMs;
    this.#atMonotonicMs = atMonotonicMs;
    this.#clock = clock;
  }

  /**
   * A deadline `ms` milliseconds from now. A budget of 0 or less is "no budget" (rule 8), never
   * "no deadline".
   * @throws TypeError when `ms` is not a finite number.
   */
  static after(ms: number, clock: Clock = systemClock): Deadline {
    if (typeof ms !== "number" || !Number.isFinite(ms)) {
      throw new TypeError(`Deadline.after: ms must be a finite number of milliseconds, got ${String(ms)}`);
    }
    // Whole epoch ms (persisted, forwarded as an integer header), rounded down: never later than asked.
    const epochMs = Math.floor(clock.nowEpochMs() + ms);
    return new Deadline(epochMs, clock.monotonicMs() + (epochMs - clock.nowEpochMs()), clock);
  }

  /**
   * A deadline at an absolute time (epoch ms), e.g. one forwarded by a caller.
   * @throws TypeError when `epochMs` is not a finite number.
   */
  static at(epochMs: number, clock: Clock = systemClock): Deadline {
    if (typeof epochMs !== "number" || !Number.isFinite(epochMs)) {
      throw new TypeError(`Deadline.at: epochMs must be a finite epoch-ms number, got ${String(epochMs)}`);
    }
    const whole = Math.floor(epochMs); // whole epoch ms, as after(): never later than asked
    const remaining = whole - clock.nowEpochMs();
    return new Deadline(whole, clock.monotonicMs() + remaining, clock);
  }

  /** Milliseconds left (never negative). */
  remainingMs(): number {
    return Math.max(0, this.#atMonotonicMs - this.#clock.monotonicMs());
  }

  /** True once no time is left. */
  expired(): boolean {
    return this.remainingMs() <= 0;
  }

  /**
   * The per-call timeout (ms): the smaller of the tool's own timeout and what is left minus the
   * reserve. Source design: `Deadline.timeout_for`.
   * @param toolTimeoutMs the tool's own timeout, ms.
   * @param reserveMs time kept back for the agent to report, ms (default 2000).
   * @param minMs least time a call may start with, ms (default 1000; tests that scale time lower it).
   * @throws DeadlineExceededError when less than `minMs` would be left: refuse to start a side effect.
   */
  timeoutFor(
    toolTimeoutMs: number,
    reserveMs: number = DEFAULT_RESERVE_MS,
    minMs: number = MIN_CALL_BUDGET_MS,
  ): number {
    const left = this.remainingMs() - reserveMs;
    if (left < minMs) {
      throw new DeadlineExceededError(
        `not enough turn budget to start a side effect: ${Math.floor(left)} ms left after a ${reserveMs} ms reserve, ${minMs} ms needed`,
        { remainingMs: left, requiredMs: minMs },
      );
    }
    return Math.min(toolTimeoutMs, left);
  }
}
