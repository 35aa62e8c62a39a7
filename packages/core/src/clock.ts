/**
 * The executor's source of time. Inject a fake one in tests; production uses {@link systemClock}.
 */
export interface Clock {
  /** Wall-clock time, epoch ms (for persistence and forwarding). */
  nowEpochMs(): number;
  /** Monotonic time in ms from an arbitrary origin (for measuring what is left). */
  monotonicMs(): number;
  /** Resolves after `ms` (clamped at 0), or rejects with the signal's reason when it aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock: `Date.now()`, `performance.now()` and `setTimeout`. */
export const systemClock: Clock = {
  nowEpochMs: () => Date.now(),
  monotonicMs: () => performance.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer = setTimeout(
        () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
        Math.max(0, ms),
      );
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
    }),
};
