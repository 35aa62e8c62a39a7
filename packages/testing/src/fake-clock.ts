import type { Clock } from "@tristate/core";

/** A clock whose time moves only when told (`advance`) or when something sleeps on it. */
export class FakeClock implements Clock {
  #epochMs: number;
  #monoMs = 0;
  constructor(startEpochMs = Date.UTC(2026, 0, 1)) {
    this.#epochMs = startEpochMs;
  }
  nowEpochMs(): number {
    return this.#epochMs;
  }
  monotonicMs(): number {
    return this.#monoMs;
  }
  /** Moves time forward by `ms`. */
  advance(ms: number): void {
    this.#epochMs += ms;
    this.#monoMs += ms;
  }
  /** Sleeping advances the fake time at once, so spaced probes run without waiting. */
  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) throw signal.reason;
    this.advance(Math.max(0, ms));
  }
}
