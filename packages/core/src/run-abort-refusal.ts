/** The refusal of a new step of an aborted run (DESIGN.md rule 13). */
import { type Envelope, refusalEnvelope } from "./envelope.ts";
import type { RunAbort } from "./run-abort.ts";

/**
 * The answer to a new step (or a new attempt of a step) of an aborted run: FAILED_NO_EFFECT
 * `RUN_ABORTED_BEFORE_SEND`, `retry_safe: false` (trying again is refused the same way), nothing sent.
 */
export function runAbortedRefusal(key: string, effectPhrase: string, abort: RunAbort): Envelope {
  const when = new Date(abort.abortedAtEpochMs).toISOString();
  return refusalEnvelope({
    key,
    effectPhrase,
    error: {
      code: "RUN_ABORTED_BEFORE_SEND",
      message: `run ${abort.runId} was aborted at ${when} by ${abort.actorName}${abort.reason ? `: ${abort.reason}` : ""}`,
    },
    retrySafe: false,
    message: `Run ${abort.runId} was aborted (${when}, by ${abort.actorName}): this step was not sent, and no step of this run will be. Stop the run and tell the user; do not retry.`,
  });
}
