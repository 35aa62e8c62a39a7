/**
 * The settle window of the τ-bench domain service (DESIGN.md rule 5b): how long after a client's
 * attempt ended the service may still apply a write or keep it invisible to its lookups, derived
 * from the service's own code (`src/service/http-service.ts`) and its fault and realism settings.
 *
 * What the service does with a write request, in order: draw the fault; `refuse` destroys the socket
 * when the head arrives; read the body; `503` answers, `reset` resets the socket; reserve the key;
 * sleep the tool's `latencyMs` (it does not watch the client meanwhile); apply the effect; record it
 * with `visibleAt` = now, or now + `lagMs` for `lag`; then answer (200, `504`, or withhold it for
 * `hangMs` on `hang`). It ignores the forwarded `Request-Deadline`, so the window is measured from
 * the end of the client's attempt, never from the deadline. Per fault kind, the latest moment after
 * the attempt ended at which the effect may still be applied or hidden:
 *
 * | fault            | bound after the attempt ended | why                                                                   |
 * | ---------------- | ----------------------------- | --------------------------------------------------------------------- |
 * | `refuse`         | none (never applied)          | the socket is closed before the body is read                          |
 * | `503`            | none (never applied)          | answered before any work                                              |
 * | `reset`          | none (never applied)          | the socket is reset before any work                                   |
 * | no fault, `504`  | `latencyMs`                   | a client that gave up during the processing sleep; visible at once   |
 * | `hang`           | `latencyMs`                   | the work is done before the answer is withheld: `hangMs` adds nothing |
 * | `lag`            | `latencyMs` + `lagMs`         | applied after the sleep, hidden from lookups for `lagMs` after that   |
 *
 * `hangMs` only sets how long the client waits for nothing (its attempt ends at its own timeout or
 * when the socket is dropped, whichever is first); the effect was applied before either. The
 * `lagResponse` (ok, 504, hang) changes what the client sees, not when the effect shows.
 */
import type { FaultConfig, FaultKind } from "../service/faults.ts";
import type { ToolRealism } from "../service/realism.ts";

/**
 * Margin added to the derived bound, ms: the time between the client giving up and the service
 * reading a body already on its socket (event-loop scheduling, timer granularity). The replay runs
 * the service in the executor's process, where this is a few ms; 500 ms leaves room for a loaded
 * machine or a service in another process on the same host.
 */
export const SETTLE_MARGIN_MS = 500;

/** The fault settings that decide the settle window (a `FaultConfig`, or `GET /admin/faults`). */
export type SettleFaults = Pick<FaultConfig, "rate" | "mix" | "lagMs">;

/**
 * How late the remote may apply a write or keep it from its lookups, as the catalog declares it:
 * - `{ faults, marginMs? }`: the τ-bench service with these fault settings (the window is derived
 *   per tool with {@link settleBoundMs}; the tool's processing latency comes from the realism table);
 * - `"unbounded"`: a remote whose lag has no known bound. No tool declares `settleMs`: an `unsafe`
 *   tool's UNKNOWN is never resent on absence and waits for a human instead.
 */
export type RemoteTiming = { faults: SettleFaults; marginMs?: number } | "unbounded";

/**
 * The latest moment after the client's attempt ended, ms, at which the service may still apply an
 * effect drawn with `fault` (`undefined` = no fault) or keep it invisible to its lookups; `null`
 * when that fault never applies the effect. See the table in this module's comment.
 */
export function settleBoundOfFault(fault: FaultKind | undefined, latencyMs: number, lagMs: number): number | null {
  switch (fault) {
    case "refuse":
    case "503":
    case "reset":
      return null;
    case undefined:
    case "504":
    case "hang":
    case "reset-after":
      return latencyMs;
    case "lag":
      return latencyMs + lagMs;
  }
}

/**
 * The settle window of one write tool, ms: the largest {@link settleBoundOfFault} over the faults the
 * configuration can draw (no fault included), plus `marginMs`. A `lag` that cannot be drawn (rate 0
 * or weight 0) does not count; a fault configuration changed later (`PUT /admin/faults`) needs the
 * catalog rebuilt.
 */
export function settleBoundMs(
  realism: Pick<ToolRealism, "latencyMs">,
  faults: SettleFaults,
  marginMs: number = SETTLE_MARGIN_MS,
): number {
  const drawn: (FaultKind | undefined)[] = [undefined];
  if (faults.rate > 0) {
    for (const [kind, weight] of Object.entries(faults.mix)) if ((weight ?? 0) > 0) drawn.push(kind as FaultKind);
  }
  let bound = 0;
  for (const fault of drawn) bound = Math.max(bound, settleBoundOfFault(fault, realism.latencyMs, faults.lagMs) ?? 0);
  return bound + marginMs;
}
