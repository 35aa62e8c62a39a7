/**
 * How the browser's requests to the dashboard's tRPC proxy (and through it the executor) give up: a
 * request not answered within {@link CLIENT_TIMEOUT_MS} is aborted (the proxy itself gives up on the
 * executor after 8 s and answers 504, so this only fires when the dashboard server hangs too), and a
 * read the executor did not answer is not retried: the outage banner asks for the executor's health
 * and refetches everything once it answers, while the page shows the last data this tab had.
 */

/** How long the browser waits for any answer of `/api/trpc`, ms (above the proxy's 8 s). */
export const CLIENT_TIMEOUT_MS = 10_000;

/** `init` with a signal that also aborts after `timeoutMs` (keeping the caller's own signal). */
export function withTimeout(init: RequestInit | undefined, timeoutMs = CLIENT_TIMEOUT_MS): RequestInit {
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = init?.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
  return { ...init, signal };
}

/**
 * Whether a read that failed `failureCount` times with HTTP status `status` (undefined: no HTTP
 * answer at all) is tried again: not when the executor did not answer (no answer, 502, 503, 504 —
 * the outage logic takes over at once), not for an answer about the request (4xx); other server
 * errors twice.
 */
export function shouldRetryRead(failureCount: number, status: number | undefined): boolean {
  if (status === undefined || status === 502 || status === 503 || status === 504) return false;
  return status >= 500 && failureCount < 2;
}
