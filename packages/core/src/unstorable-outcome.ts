/**
 * An outcome the intent log refuses for good (issue 21 §3): the remote answered, but the store will
 * never accept that write (`WriteRefusedError`: a value its database can never hold). Retrying it
 * forever left the record PENDING or UNKNOWN outside the human queue and the agent with a 500. Instead
 * the record goes to a person (UNKNOWN, `needsHuman`, `OUTCOME_NOT_STORABLE`) with what the remote
 * answered (its status, the HTTP status, the error code) and the store's reason, written from the
 * executor's own words only, so that this write is one the store accepts.
 */
import { humanRecheckAt } from "./human-queue.ts";
import type { IntentEvent, IntentPatch, IntentRecord } from "./intent-store.ts";
import { recheckAt } from "./lease.ts";
import { event } from "./record-events.ts";
import type { Runtime } from "./runtime.ts";
import { storableValue } from "./stored-json.ts";
import type { AnyTool } from "./tool.ts";
import type { WriteRefusedError } from "./write-refused.ts";

/** The reason code of a record whose outcome could not be stored. */
const CODE = "OUTCOME_NOT_STORABLE";

/** What the person is told: what the remote answered and why the log would not keep it. */
function reasonOf(patch: IntentPatch, refused: WriteRefusedError, source: string | undefined): string {
  const answered = source
    ? source
    : patch.status === "SUCCEEDED"
      ? "the remote answered that the effect happened (SUCCEEDED)"
      : patch.status === "FAILED_NO_EFFECT"
        ? `the remote answered that nothing happened (FAILED_NO_EFFECT, ${patch.error?.code ?? "no code"})`
        : `the call's outcome was ${patch.status ?? "UNKNOWN"}${patch.error?.code ? ` (${patch.error.code})` : ""}`;
  const status = patch.error?.httpStatus !== undefined ? ` with HTTP ${patch.error.httpStatus}` : "";
  return (
    `${answered}${status}, but the intent log refused to store that outcome for good ` +
    `(${refused.reason}${refused.code ? `, ${refused.code}` : ""}); a person decides`
  );
}

/**
 * Writes the record to the human queue after its outcome write was refused for good: the compare-and-
 * set on the same version (nothing else was written), no result, the reason as the record's error and
 * a `needs_human` event.
 * @param source - what produced the outcome, in words, when not the remote's answer (e.g. a probe's find).
 * @returns the record as written, or null when another process changed it meanwhile.
 * @throws what the store throws for this write (then nothing more can be done here: the sweeper has it).
 */
export function outcomeNotStorable(
  rt: Runtime,
  tool: AnyTool | undefined,
  record: IntentRecord,
  w: { patch: IntentPatch; now: number },
  refused: WriteRefusedError,
  source?: string,
): Promise<IntentRecord | null> {
  const reason = storableValue(reasonOf(w.patch, refused, source));
  const events: IntentEvent[] = [
    event(rt, record.key, "outcome", {
      outcome: "UNKNOWN",
      code: CODE,
      answered: w.patch.status ?? "UNKNOWN",
      ...(w.patch.error?.httpStatus !== undefined ? { httpStatus: w.patch.error.httpStatus } : {}),
    }),
    event(rt, record.key, "needs_human", { code: CODE, reason }),
  ];
  const patch: IntentPatch = {
    status: "UNKNOWN",
    result: undefined,
    needsHuman: true,
    resolution: null,
    error: {
      code: CODE,
      message: reason,
      ...(w.patch.error?.httpStatus ? { httpStatus: w.patch.error.httpStatus } : {}),
    },
    settlesAtEpochMs: null,
    ...recheckAt(record, humanRecheckAt(rt, tool, record.reconcileSweeps, w.now)),
  };
  return rt.store.update(record.key, record.version, patch, events, w.now, { durable: true });
}
