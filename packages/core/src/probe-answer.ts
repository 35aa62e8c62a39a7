/**
 * A key probe's third answer, besides "found" (the effect) and "absent" (null): the remote's record
 * of this very key says the request was processed and refused, so it had no effect — a stored 402 or
 * 400 that the remote's key store replays, τ-bench's `Error: …` outputs. It is the remote's own
 * answer to the original request, read back: proof of no effect (FAILED_NO_EFFECT), unlike a refused
 * *resend*, which proves nothing about the original (DESIGN.md rule 5f).
 *
 * Only a key probe's answer counts: an identity probe cannot tie a refusal to this request, so there
 * it reads as "absent".
 */
const REFUSED = Symbol.for("tristate.probe.refused_under_key");
const UNCLEAR = Symbol.for("tristate.probe.found_state_unknown");

/** What {@link refusedUnderKey} returns; recognised across copies of the package. */
export interface RefusedUnderKey {
  readonly [REFUSED]: true;
  /** The remote's refusal as it recorded it (kept on the record, redacted). */
  readonly detail: string;
  /** The HTTP status the remote answered the request with, when known. */
  readonly httpStatus?: number;
  /** The item the probe found in a failed or declined state, when there is one (kept on the timeline). */
  readonly evidence?: unknown;
}

/**
 * The answer a key probe returns when the remote's record of the key shows the request was
 * processed and refused (no effect).
 * @param detail - the remote's refusal, e.g. its stored error message.
 * @param httpStatus - the status it answered with, when known.
 */
export function refusedUnderKey(detail: string, httpStatus?: number, evidence?: unknown): RefusedUnderKey {
  return {
    [REFUSED]: true,
    detail,
    ...(httpStatus !== undefined ? { httpStatus } : {}),
    ...(evidence !== undefined ? { evidence } : {}),
  };
}

/** True when a probe returned {@link refusedUnderKey}'s answer (from any copy of this package). */
export function isRefusedUnderKey(value: unknown): value is RefusedUnderKey {
  return typeof value === "object" && value !== null && (value as { [REFUSED]?: unknown })[REFUSED] === true;
}

/**
 * A probe's fourth answer (DESIGN.md rule 5a): it found the request's item — so the request was
 * delivered — but cannot tell whether the effect happened (the item's state is not one the probe
 * knows as done, in progress or failed; or the probe declares no states at all). Never proof of
 * success: the executor reads back the remote's stored answer with a same-key resend where the
 * remote dedupes the key and still remembers it, and otherwise sends the record to a person
 * (`FOUND_STATE_UNKNOWN`).
 */
export interface FoundStateUnknown {
  readonly [UNCLEAR]: true;
  /** The item found (kept on the timeline). */
  readonly item: unknown;
  /** Why its state tells nothing, e.g. `status = "requires_action" is none of the declared states`. */
  readonly why: string;
}

/**
 * The answer a probe returns when it found the request's item but cannot tell whether it took effect.
 * @param item - what the probe found.
 * @param why - why its state tells nothing (shown to the operator, redacted).
 */
export function foundStateUnknown(item: unknown, why: string): FoundStateUnknown {
  return { [UNCLEAR]: true, item, why };
}

/** True when a probe returned {@link foundStateUnknown}'s answer (from any copy of this package). */
export function isFoundStateUnknown(value: unknown): value is FoundStateUnknown {
  return typeof value === "object" && value !== null && (value as { [UNCLEAR]?: unknown })[UNCLEAR] === true;
}
