/**
 * Evidence that arrives after a decision (DESIGN.md rule 16; issue 20 §4): a late answer or a probe
 * that contradicts a settled record or a person's decision reopens the record for a person, with
 * both pieces of evidence on its timeline. It never silently overwrites the decision and never stays
 * only in a log.
 */
import type { IntentError, IntentEvent, IntentPatch, IntentRecord } from "./intent-store.ts";
import { wireKey } from "./intent-store.ts";
import type { JsonObject, JsonValue } from "./json.ts";
import { event } from "./record-events.ts";
import type { Runtime } from "./runtime.ts";
import type { AnyTool } from "./tool.ts";
import { toolKindPolicy } from "./tool-kind-policy.ts";

/** What arrived after the decision: an effect (`SUCCEEDED`) or a refusal (`FAILED_NO_EFFECT`) of one attempt. */
export interface LateEvidence {
  /** `late_answer`: a send's own answer, written after another process took the record over; `probe`: a probe run later. */
  source: "late_answer" | "probe";
  /** What the evidence says happened. */
  outcome: "SUCCEEDED" | "FAILED_NO_EFFECT";
  /** The attempt the evidence is about (a late answer's own attempt; a key probe's: the record's current one). */
  attempt: number;
  /** The wire key the evidence is about (the key sent by that attempt, or the one a key probe looked up). */
  wireKey: string;
  /** The remote's HTTP status, when the evidence is an HTTP answer. */
  httpStatus?: number;
  /** The effect as the remote answered or the probe found it (SUCCEEDED), or the refusal's reason code. */
  detail?: JsonValue;
}

/**
 * Whether `evidence` contradicts what `current` says (a decision by a person or by the executor):
 * - an effect contradicts FAILED_NO_EFFECT, whatever the attempt (the record says nothing happened);
 * - an effect of another attempt contradicts SUCCEEDED unless both went under one wire key to a
 *   remote that deduplicates by key (then they are one effect): two effects may exist;
 * - a refusal of the very attempt that a probe or a person settled SUCCEEDED (`found`,
 *   `human_confirmed_effect`) contradicts it;
 * - an effect of another attempt contradicts an UNKNOWN one on the same terms (attempt 1's 201 says
 *   nothing of whether attempt 2, sent under another key, also took effect); otherwise evidence
 *   settles an UNKNOWN record;
 * - nothing contradicts a PENDING record: it belongs to a call in flight, whose own answer decides
 *   it (a late answer waits for that outcome, see `late-answer.ts`).
 */
export function contradicts(
  current: Pick<IntentRecord, "status" | "attempt" | "resolution" | "key" | "sentKey">,
  tool: Pick<AnyTool, "kind"> | undefined,
  evidence: LateEvidence,
): boolean {
  const oneEffect = () =>
    evidence.wireKey === wireKey(current) && tool !== undefined && toolKindPolicy(tool.kind).remoteDedupesKey;
  switch (current.status) {
    case "PENDING":
      return false;
    case "UNKNOWN":
      // An effect of another attempt says nothing of this one's, unless the remote made them one.
      return evidence.outcome === "SUCCEEDED" && evidence.attempt !== current.attempt && !oneEffect();
    case "FAILED_NO_EFFECT":
      return evidence.outcome === "SUCCEEDED";
    case "SUCCEEDED":
      if (evidence.outcome === "SUCCEEDED") {
        return evidence.attempt !== current.attempt && !oneEffect();
      }
      return (
        evidence.attempt === current.attempt &&
        (current.resolution === "found" || current.resolution === "human_confirmed_effect")
      );
  }
}

/**
 * The write that reopens `current` for a person (rule 16): the queue flag, the reason
 * `CONTRADICTING_EVIDENCE` naming both sides, and a `needs_human` event carrying both pieces of
 * evidence. An effect that contradicts FAILED_NO_EFFECT also makes the record SUCCEEDED (`found`,
 * the effect's answer as its result, `answer`'s fields), so a repeat call replays it instead of
 * sending a second effect; a person then compensates it or acknowledges it (`confirm_effect`).
 * @param answer - the patch the evidence's own send would have written (a late answer), if any.
 * @returns the patch and the events to write with it, compare-and-set on `current.version`.
 */
export function reopenForPerson(
  rt: Runtime,
  current: IntentRecord,
  evidence: LateEvidence,
  answer: IntentPatch = {},
): { patch: IntentPatch; events: IntentEvent[] } {
  const decided = decisionOf(current);
  const secondEffect = current.status !== "FAILED_NO_EFFECT" && evidence.outcome === "SUCCEEDED";
  const said = secondEffect
    ? "it happened too: two effects may exist"
    : evidence.outcome === "SUCCEEDED"
      ? "it happened"
      : "it did not happen";
  const from =
    evidence.source === "late_answer"
      ? `attempt ${evidence.attempt}'s answer${evidence.httpStatus ? ` (HTTP ${evidence.httpStatus})` : ""}, arriving after, says ${said}`
      : `a later probe says ${said}`;
  const error: IntentError = {
    code: "CONTRADICTING_EVIDENCE",
    message: `${decided.words}; ${from}. Both are kept: compensate the effect, or confirm_effect once it is dealt with`,
  };
  const data: JsonObject = {
    code: error.code,
    reason: error.message,
    decided: decided.data,
    evidence: {
      source: evidence.source,
      outcome: evidence.outcome,
      attempt: evidence.attempt,
      ...(evidence.httpStatus !== undefined ? { httpStatus: evidence.httpStatus } : {}),
      ...(evidence.detail !== undefined ? { detail: evidence.detail } : {}),
    },
  };
  const effectNowProven = current.status === "FAILED_NO_EFFECT" && evidence.outcome === "SUCCEEDED";
  const patch: IntentPatch = effectNowProven
    ? {
        ...answer,
        status: "SUCCEEDED",
        ...(answer.result === undefined && evidence.detail !== undefined ? { result: evidence.detail } : {}),
        resolution: "found",
        needsHuman: true,
        error,
        finishedAtEpochMs: rt.clock.nowEpochMs(),
        settlesAtEpochMs: null,
      }
    : { needsHuman: true, error };
  return { patch, events: [event(rt, current.key, "needs_human", data)] };
}

/** The decision the evidence meets, in words and as data (for the timeline). */
function decisionOf(current: IntentRecord): { words: string; data: JsonObject } {
  const data: JsonObject = {
    status: current.status,
    resolution: current.resolution,
    attempt: current.attempt,
    ...(current.error ? { code: current.error.code } : {}),
  };
  const by = current.resolution?.startsWith("human_") ? "an operator" : "the executor";
  const how = `attempt ${current.attempt}${current.resolution ? `, ${current.resolution}` : ""}`;
  switch (current.status) {
    case "FAILED_NO_EFFECT":
      return { words: `${by} settled it as not having happened (${how})`, data };
    case "SUCCEEDED":
      return { words: `${by} settled it as done (${how})`, data };
    case "UNKNOWN":
    case "PENDING":
      return { words: `attempt ${current.attempt}'s outcome is not known yet`, data };
  }
}
