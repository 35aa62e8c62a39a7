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

/** What {@link refusedUnderKey} returns; recognised across copies of the package. */
export interface RefusedUnderKey {
  readonly [REFUSED]: true;
  /** The remote's refusal as it recorded it (kept on the record, redacted). */
  readonly detail: string;
  /** The HTTP status the remote answered the request with, when known. */
  readonly httpStatus?: number;
}

/**
 * The answer a key probe returns when the remote's record of the key shows the request was
 * processed and refused (no effect).
 * @param detail - the remote's refusal, e.g. its stored error message.
 * @param httpStatus - the status it answered with, when known.
 */
export function refusedUnderKey(detail: string, httpStatus?: number): RefusedUnderKey {
  return { [REFUSED]: true, detail, ...(httpStatus !== undefined ? { httpStatus } : {}) };
}

/** True when a probe returned {@link refusedUnderKey}'s answer (from any copy of this package). */
export function isRefusedUnderKey(value: unknown): value is RefusedUnderKey {
  return typeof value === "object" && value !== null && (value as { [REFUSED]?: unknown })[REFUSED] === true;
}
