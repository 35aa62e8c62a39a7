/**
 * Worst first: the highest UNKNOWN share (0–1), then the most calls, then by name (a stable order),
 * for the overview's small charts. Returns a new array.
 */
export function worstFirst<T extends { tool: string; calls: number; unknownShare: number }>(tools: T[]): T[] {
  return [...tools].sort(
    (a, b) => b.unknownShare - a.unknownShare || b.calls - a.calls || a.tool.localeCompare(b.tool),
  );
}

/** The busiest slice of a series (`t` its start, epoch ms): the first with the most calls, or null when none has calls. */
export function peakOf<P extends { t: number; calls: number }>(points: P[]): P | null {
  let peak: P | null = null;
  for (const p of points) if (p.calls > 0 && (!peak || p.calls > peak.calls)) peak = p;
  return peak;
}
