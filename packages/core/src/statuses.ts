/**
 * The closed vocabularies of Tristate, with their predicates, in one place.
 * Source: `DESIGN.md` (vocabulary and state machine) and the source design's "Three outcomes, not two".
 */

/** Every status an intent record can have. `PENDING` is written before the call is sent. */
export const INTENT_STATUSES = ["PENDING", "SUCCEEDED", "FAILED_NO_EFFECT", "UNKNOWN"] as const;
/** Status of an intent record: `PENDING` before the outcome is known, then one of the three outcomes. */
export type IntentStatus = (typeof INTENT_STATUSES)[number];

/** The three outcomes of a side-effecting call (an envelope never says `PENDING`). */
export const OUTCOMES = ["SUCCEEDED", "FAILED_NO_EFFECT", "UNKNOWN"] as const;
/** One of the three outcomes a caller can see. */
export type Outcome = (typeof OUTCOMES)[number];

/** True for statuses that end a record's life unless an operator acts: the effect is known. */
export function isSettled(status: IntentStatus): status is "SUCCEEDED" | "FAILED_NO_EFFECT" {
  return status === "SUCCEEDED" || status === "FAILED_NO_EFFECT";
}

/** True for statuses that need reconciliation before anything else may happen (rule 2). */
export function isUnsettled(status: IntentStatus): status is "PENDING" | "UNKNOWN" {
  return status === "PENDING" || status === "UNKNOWN";
}

/** How an UNKNOWN ended, as an intent record stores it (`IntentRecord.resolution`). */
export const STORED_RESOLUTIONS = [
  "found",
  "absent_resent",
  "human_confirmed_effect",
  "human_confirmed_no_effect",
  "human_resent",
] as const;
/** How an UNKNOWN ended, as stored on the record; see {@link STORED_RESOLUTIONS}. */
export type StoredResolution = (typeof STORED_RESOLUTIONS)[number];

/**
 * The resolutions agents and operators read (envelopes, API answers): the stored ones, and
 * `needs_human` for an UNKNOWN record waiting for a person. `needs_human` is never stored: it is
 * derived from the record's `needsHuman` by `shownResolution` (issue 19).
 */
export const RESOLUTIONS = [...STORED_RESOLUTIONS, "needs_human"] as const;
/** How an UNKNOWN ended, or `needs_human` while a person must still decide (derived, never stored). */
export type Resolution = (typeof RESOLUTIONS)[number];

/**
 * What an abort runs for a confirmed effect (the kind recorded with a record's compensation):
 * the tool's `compensation`, or an irreversible tool's `corrective` action.
 */
export const COMPENSATION_KINDS = ["compensation", "corrective"] as const;
/** One of {@link COMPENSATION_KINDS}. */
export type CompensationKind = (typeof COMPENSATION_KINDS)[number];

/**
 * The resolution readers see for a record (envelopes, API answers): `needs_human` while it is
 * UNKNOWN and waits in the human queue, else its stored resolution (null: none). A record waiting
 * for a person after its effect was confirmed (a correction, a failed compensation) keeps its own.
 * The one place `needs_human` is derived from the stored `needsHuman`.
 */
export function shownResolution(record: {
  status: IntentStatus;
  needsHuman: boolean;
  resolution: StoredResolution | null;
}): Resolution | null {
  return record.needsHuman && record.status === "UNKNOWN" ? "needs_human" : record.resolution;
}

/** Tool kinds (DESIGN.md vocabulary). */
export const TOOL_KINDS = ["read_only", "idempotent_by_key", "unsafe"] as const;
/**
 * - `read_only`: no effect; a plain retry is fine; no intent record.
 * - `idempotent_by_key`: the remote dedupes requests carrying the same `Idempotency-Key`.
 * - `unsafe`: no key support: never resent automatically, unless the tool declares a settle window
 *   (`settleMs`) and probes that ran after it found nothing (rule 5b).
 */
export type ToolKind = (typeof TOOL_KINDS)[number];

/**
 * Machine-readable reasons carried by envelopes and intent records (`error.code`).
 * Source: the field cases' suggested codes plus the executor's own pre-flight checks.
 */
export const REASON_CODES = [
  // FAILED_NO_EFFECT: the request provably did not reach the remote, or the remote refused before work
  "NOT_SENT",
  "REJECTED",
  "DEADLINE_EXCEEDED",
  "INVALID_ARGUMENTS",
  // the tool's own code threw before any request was written in the call's async context (rule 11)
  "TOOL_ERROR_NOT_SENT",
  // a repeat call inside the remote's Retry-After window: answered without sending
  "RETRY_AFTER",
  "UNKNOWN_TOOL",
  "IDEMPOTENCY_CONFLICT",
  // a confirmation policy without a token that confirms this run, step, tool and every argument value
  // shown (error.field `args.<name>` when only argument values differ), refused before sending
  "CONFIRMATION_REQUIRED",
  "IRREVERSIBLE_BEFORE_FALLIBLE",
  // a new step of a run that was aborted: refused before anything was written or sent (rule 13)
  "RUN_ABORTED_BEFORE_SEND",
  // UNKNOWN: the request may have been delivered
  "READ_TIMEOUT",
  "RESET_AFTER_WRITE",
  "GATEWAY_5XX",
  "IN_FLIGHT",
  "AMBIGUOUS",
  "LEASE_EXPIRED",
  "NO_PROBE",
  "PROBE_FAILED",
  "PROBES_ABSENT_NO_DEDUPE",
  "KEY_RETENTION_EXPIRED",
  // probes said absent before the tool's settle window ended: not yet proof (rule 5b)
  "ABSENCE_NOT_CONCLUSIVE",
  // a resend after an UNKNOWN original was refused (4xx/409/422): no proof either way (rule 5f)
  "RESEND_REFUSED",
  // an identity probe matched an effect that belongs to another record or carries another key (rule 5g)
  "AMBIGUOUS_IDENTITY_MATCH",
  // the remote answered that part of the request took effect (e.g. a 207 with failed items)
  "PARTIAL_EFFECT",
  // one invoke wrote the same unsafe request more than once (a client library's own retry) to a
  // remote that does not dedupe a key: possibly more than one effect; a person decides (rule 11)
  "REPEATED_WRITE",
  // a probe found the request's item but its state does not tell whether the effect happened, and
  // no same-key read-back of the remote's stored answer is possible: a person decides (rule 5a)
  "FOUND_STATE_UNKNOWN",
  // the remote answered, but the intent log refused to store that outcome for good (a value its
  // database can never hold, not a transient failure): a person decides, the answer's status and the
  // database's reason kept on the record (issue 21 §3)
  "OUTCOME_NOT_STORABLE",
  // the executor's own intent log did not answer before the call's answer time (deadline minus the
  // reserve): nothing was sent by the call, or its outcome write is not yet confirmed (issue 21 §1)
  "INTENT_LOG_TIMEOUT",
  // operator
  "OPERATOR_CONFIRMED_NO_EFFECT",
  // compensation (sagas)
  "COMPENSATION_FAILED",
  // an UNKNOWN effect of an aborted run: a person decides; found later, it must be compensated
  "RUN_ABORTED",
  "IRREVERSIBLE_NEEDS_CORRECTION",
  // evidence that arrived after a decision contradicts it (a late effect after "no effect", a second
  // effect beside a SUCCEEDED attempt): reopened for a person with both pieces of evidence (rule 16)
  "CONTRADICTING_EVIDENCE",
] as const;
/** A reason code; see {@link REASON_CODES}. */
export type ReasonCode = (typeof REASON_CODES)[number];

/**
 * What an operator may do with a record waiting for a human (DESIGN.md: `needs_human --operator-->
 * SUCCEEDED | FAILED_NO_EFFECT | resend`). `compensate` is refused until issue 4 builds compensation.
 */
export const OPERATOR_ACTIONS = ["confirm_effect", "confirm_no_effect", "resend_same_key", "compensate"] as const;
/** One of {@link OPERATOR_ACTIONS}. */
export type OperatorAction = (typeof OPERATOR_ACTIONS)[number];
