/** Time around a call shown in the trace viewer, ms (5 minutes either side). */
export const TRACE_MARGIN_MS = 5 * 60_000;

/**
 * Fills the trace URL template: `{traceId}`, and the window from `startEpochMs − margin` to
 * `endEpochMs + margin` as `{startMs}`/`{endMs}` (epoch ms) and `{startMicros}`/`{endMicros}` (epoch µs).
 */
export function buildTraceUrl(
  template: string,
  traceId: string,
  startEpochMs: number,
  endEpochMs: number,
  marginMs: number = TRACE_MARGIN_MS,
): string {
  const startMs = Math.max(0, Math.floor(startEpochMs - marginMs));
  const endMs = Math.floor(Math.max(endEpochMs, startEpochMs) + marginMs);
  const values: Record<string, string> = {
    traceId: encodeURIComponent(traceId),
    startMs: String(startMs),
    endMs: String(endMs),
    startMicros: `${startMs}000`,
    endMicros: `${endMs}000`,
  };
  return template.replace(
    /\{(traceId|startMs|endMs|startMicros|endMicros)\}/g,
    (_, name: string) => values[name] ?? "",
  );
}
