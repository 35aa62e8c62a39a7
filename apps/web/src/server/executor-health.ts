import { env } from "../env";

/** How long a call to the executor may take before the dashboard treats it as not answering, ms. */
export const EXECUTOR_TIMEOUT_MS = 8_000;
/** How long the health check waits for `/healthz`, ms. */
const HEALTH_TIMEOUT_MS = 3_000;

/** Whether the executor answered lately, as this dashboard server saw it (one value per server process). */
export interface ExecutorHealth {
  /** True while the last call reached the executor. */
  up: boolean;
  /** When the current outage began (epoch ms), or null while the executor answers. */
  downSinceEpochMs: number | null;
  /** When this was last checked (epoch ms). */
  checkedAtEpochMs: number;
}

let downSinceEpochMs: number | null = null;
let checkedAtEpochMs = 0;

/** Records that a call reached the executor (any HTTP answer): the outage, if any, is over. */
export function noteExecutorReachable(nowEpochMs = Date.now()): void {
  downSinceEpochMs = null;
  checkedAtEpochMs = nowEpochMs;
}

/** Records that a call did not reach the executor (refused, reset, timed out); keeps the first failure's time. */
export function noteExecutorUnreachable(nowEpochMs = Date.now()): void {
  downSinceEpochMs ??= nowEpochMs;
  checkedAtEpochMs = nowEpochMs;
}

/** The current view of the executor's health, without asking it. */
export function executorHealth(): ExecutorHealth {
  return { up: downSinceEpochMs === null, downSinceEpochMs, checkedAtEpochMs };
}

/**
 * A `fetch` for calls to the executor: aborted after {@link EXECUTOR_TIMEOUT_MS} (or `timeoutMs`),
 * and noting whether the executor answered. Throws as `fetch` does when it did not.
 */
export async function fetchExecutor(
  input: string | URL | Request,
  init: RequestInit = {},
  timeoutMs = EXECUTOR_TIMEOUT_MS,
): Promise<Response> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
  try {
    const response = await fetch(input, { ...init, signal });
    noteExecutorReachable();
    return response;
  } catch (error) {
    if (!init.signal?.aborted) noteExecutorUnreachable();
    throw error;
  }
}

/** Asks the executor's `/healthz` now (3 s at most) and answers the updated health. */
export async function checkExecutor(): Promise<ExecutorHealth> {
  try {
    await fetchExecutor(new URL("/healthz", env.EXECUTOR_URL), { cache: "no-store" }, HEALTH_TIMEOUT_MS);
  } catch {
    // noted by fetchExecutor
  }
  return executorHealth();
}
