/**
 * A bounded stop (issue 21 §1): SIGTERM ends the process within `TRISTATE_SHUTDOWN_GRACE_MS` plus
 * {@link SHUTDOWN_MARGIN_MS}, whatever the database does. Each step of a stop is bounded; a step that
 * does not finish in time is abandoned (logged), and what it held — calls in flight, outcome writes
 * not yet landed — is left PENDING with its deadline for the sweepers of any replica to settle.
 */
import type { Logger } from "./logger.ts";

/**
 * Time past the grace period the closing steps may take (database, upstreams, telemetry), ms; the
 * process exits by grace + this at the latest.
 */
export const SHUTDOWN_MARGIN_MS = 2000;

/** Least time a closing step is given even when the stop is already late, ms. */
const MIN_STEP_MS = 50;

/**
 * Runs one step of a stop, waiting at most until `byEpochMs` (at least {@link MIN_STEP_MS}). A step
 * that fails or does not finish in time is logged and left behind; never throws.
 * @returns true when the step finished in time without error.
 */
export async function boundedStep(
  name: string,
  step: () => Promise<unknown>,
  byEpochMs: number,
  logger: Logger,
): Promise<boolean> {
  const boundMs = Math.max(MIN_STEP_MS, byEpochMs - Date.now());
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), boundMs);
  });
  try {
    const outcome = await Promise.race([
      Promise.resolve()
        .then(step)
        .then(() => "done" as const),
      late,
    ]);
    if (outcome === "late") logger.warn({ step: name, boundMs }, "stop: step did not finish in time; left behind");
    return outcome === "done";
  } catch (error) {
    logger.warn({ err: error, step: name }, "stop: step failed; left behind");
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The last resort of a stop: after `graceMs` + {@link SHUTDOWN_MARGIN_MS}, logs what is handed to the
 * sweepers and exits with code 1, whatever is still running. The timer is unref'd: it never keeps a
 * process alive that would end on its own.
 * @param inFlight calls still in flight (their PENDING records are the sweepers' now).
 * @returns the timer (clear it when the stop ended in time).
 */
export function armLastResortExit(
  graceMs: number,
  logger: Logger,
  inFlight: () => number,
  exit: (code: number) => void = (code) => process.exit(code),
): NodeJS.Timeout {
  const timer = setTimeout(() => {
    logger.error(
      { inFlight: inFlight(), graceMs, marginMs: SHUTDOWN_MARGIN_MS },
      "stop did not finish within the grace period and margin: exiting; calls in flight are handed to the sweepers (their PENDING records carry deadlines)",
    );
    logger.flush?.();
    exit(1);
  }, graceMs + SHUTDOWN_MARGIN_MS);
  timer.unref();
  return timer;
}
