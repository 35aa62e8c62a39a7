/**
 * The agents' loop and what it measured: `agents` loops each making one call after another for a
 * fixed window, every call timed from the moment it was sent to the moment its answer (or error)
 * came back.
 */

/** What one call came back with: an outcome and, where there is one, a code. */
export interface CallResult {
  /** `SUCCEEDED`, `FAILED_NO_EFFECT`, `UNKNOWN`, or `error` when no envelope came back. */
  outcome: string;
  /** The envelope's `error.code`, or the error's kind (`transport:TIMED_OUT`, `api:503`, …); null if none. */
  code: string | null;
}

/** One measured call. */
export interface CallSample extends CallResult {
  /** From the moment it was sent to its answer, ms. */
  ms: number;
}

/** One phase: the calls sent inside its measured window, and the window. */
export interface PhaseSamples {
  samples: CallSample[];
  /** Length of the measured window (after the warm-up), s. */
  windowSeconds: number;
  /** From the end of the window until the last call sent in it was answered, ms. */
  drainMs: number;
}

/**
 * Runs `agents` loops back to back for `warmupSeconds + seconds`: each sends `call(agent, i)`, waits
 * for it, and sends the next. Calls sent during the warm-up are not kept; every call sent inside the
 * window is waited for and kept, however late it answers.
 */
export async function runAgents(
  agents: number,
  warmupSeconds: number,
  seconds: number,
  call: (agent: number, i: number) => Promise<CallResult>,
): Promise<PhaseSamples> {
  const start = performance.now();
  const windowStart = start + warmupSeconds * 1000;
  const windowEnd = windowStart + seconds * 1000;
  const samples: CallSample[] = [];
  const loops = Array.from({ length: agents }, async (_, agent) => {
    for (let i = 0; performance.now() < windowEnd; i++) {
      const sentAt = performance.now();
      let result: CallResult;
      try {
        result = await call(agent, i);
      } catch (error) {
        result = { outcome: "error", code: errorCode(error) };
      }
      const ms = performance.now() - sentAt;
      if (sentAt >= windowStart) samples.push({ ...result, ms });
    }
  });
  await Promise.all(loops);
  return { samples, windowSeconds: seconds, drainMs: Math.max(0, performance.now() - windowEnd) };
}

/** A short name for an error a call threw: the client's typed errors by kind, anything else by name. */
function errorCode(error: unknown): string {
  if (typeof error === "object" && error !== null) {
    const e = error as { name?: string; reason?: string; httpStatus?: number };
    if (e.name === "TristateTransportError") return `transport:${e.reason ?? "?"}`;
    if (typeof e.httpStatus === "number") return `api:${e.httpStatus}`;
    if (e.name) return e.name;
  }
  return "thrown";
}

/** Latency figures of one phase, ms, and its rate. */
export interface PhaseFigures {
  calls: number;
  callsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  meanMs: number;
  drainMs: number;
}

/** p50/p99/max/mean of the samples' answer times, and calls per second of the window. */
export function phaseFigures(phase: PhaseSamples): PhaseFigures {
  const sorted = phase.samples.map((s) => s.ms).sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return {
    calls: sorted.length,
    callsPerSecond: sorted.length / phase.windowSeconds,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    maxMs: sorted.at(-1) ?? Number.NaN,
    meanMs: sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length),
    drainMs: phase.drainMs,
  };
}

/** How many samples answered later than `limitMs` after they were sent, and their share of all. */
export function lateShare(samples: CallSample[], limitMs: number): { count: number; share: number } {
  const count = samples.filter((s) => s.ms > limitMs).length;
  return { count, share: samples.length ? count / samples.length : 0 };
}

/** Counts of outcomes and of `outcome code` pairs (e.g. `UNKNOWN READ_TIMEOUT`, `error transport:TIMED_OUT`). */
export function outcomeCounts(samples: CallSample[]): {
  outcomes: Record<string, number>;
  codes: Record<string, number>;
} {
  const outcomes: Record<string, number> = {};
  const codes: Record<string, number> = {};
  for (const s of samples) {
    outcomes[s.outcome] = (outcomes[s.outcome] ?? 0) + 1;
    if (s.code !== null) {
      const k = `${s.outcome} ${s.code}`;
      codes[k] = (codes[k] ?? 0) + 1;
    }
  }
  return { outcomes, codes };
}
