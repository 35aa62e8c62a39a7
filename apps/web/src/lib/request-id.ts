/**
 * The executor's request id (`X-Request-Id`) of a failed call, for the dashboard to show with the
 * error: an operator quotes it, and the executor's log line and trace for that call carry it.
 */

/** The header that carries a request id, to the executor and back. */
export const REQUEST_ID_HEADER = "x-request-id";

/**
 * The request id of an API error: `data.requestId` of a tRPC error (a `TRPCClientError`, or the
 * dashboard proxy's own 502/504), or undefined when the error carries none.
 */
export function requestIdOf(error: unknown): string | undefined {
  if (error === null || typeof error !== "object") return undefined;
  const id = (error as { data?: { requestId?: unknown } | null }).data?.requestId;
  return typeof id === "string" && id !== "" ? id : undefined;
}
