import type { IntentError, IntentRecord } from "./intent-store.ts";
import type { JsonValue } from "./json.ts";
import { type Outcome, type Resolution, shownResolution } from "./statuses.ts";

/**
 * The structured result the model reads instead of an exception string. Source: the source design's
 * "What the model sees".
 */
export interface Envelope {
  /** One of the three outcomes. A call still in flight elsewhere reads `UNKNOWN`. */
  status: Outcome;
  /**
   * Whether calling again is the model's decision to make. False whenever an effect may exist
   * unconfirmed (UNKNOWN), and for conflicts that a repeat cannot fix.
   */
  retry_safe: boolean;
  /** What happened in the world, in one sentence (e.g. "refund of 49.90 EUR on order A-1182 was issued"). */
  effect: string;
  /** What the executor did (sent once; replayed the record; probed and found it; resent with the same key; asked an operator). */
  action_taken: string;
  /** What the model should do next, addressed to it. */
  message: string;
  /** The executor-derived idempotency key (32 hex characters). */
  idempotency_key: string;
  /** Attempt number of the record (1-based). */
  attempt: number;
  /** True when the answer comes from the intent log and nothing was sent now. */
  replayed: boolean;
  /** The tool's result (SUCCEEDED), or what a probe found. Absent when the tool returned nothing. */
  result?: JsonValue;
  /** How an UNKNOWN was (or is to be) resolved. */
  resolution?: Resolution;
  /** Why it failed or is unknown. */
  error?: IntentError;
  /**
   * How long to wait before calling again, ms, when the remote asked for time (`Retry-After` on a
   * 429/503): a repeat call sooner is answered without sending anything.
   */
  retry_after_ms?: number;
  /**
   * The key this attempt sent on the wire, when it differs from `idempotency_key` (a new attempt
   * after a definite rejection the remote may have cached under the key; rule 3).
   */
  sent_key?: string;
  /**
   * The arguments the record's latest send used, on attempts after the first: the new call's
   * (validated) after FAILED_NO_EFFECT, the stored ones after a resend of an UNKNOWN.
   */
  sent_args?: JsonValue;
}

/**
 * The system-prompt rule that goes with envelopes (source design: "Add a system-prompt rule: when
 * retry_safe is false, report the status instead of calling again").
 */
export const RETRY_SAFE_PROMPT_RULE =
  "Tool results are envelopes with a status of SUCCEEDED, FAILED_NO_EFFECT or UNKNOWN and a retry_safe flag. " +
  "When retry_safe is false, do not call the tool again for that step: tell the user the status and what happens next, " +
  "as the envelope's message says. When retry_safe is true and the status is FAILED_NO_EFFECT, nothing happened and you " +
  "may try again. Never invent your own idempotency keys; the executor derives them.";

/** Inputs for {@link buildEnvelope} beyond the record. */
export interface EnvelopeContext {
  /** One phrase naming the effect, from the tool's `describe` (e.g. "refund of 49.90 EUR on order A-1182"). */
  effectPhrase: string;
  /** True when nothing was sent during this call and the answer comes from the log. */
  replayed: boolean;
  /** Override for `action_taken` (e.g. after a resend or a probe). */
  actionTaken?: string;
  /** Now, epoch ms (for `retry_after_ms`). Default: no `retry_after_ms`. */
  nowEpochMs?: number;
  /**
   * For a record waiting for a person: whether an operator is notified (the service has a channel
   * receiving the human queue's events, issue 23 §3). Default false: it waits in the human queue.
   */
  operatorNotified?: boolean;
}

/**
 * What the model is told of a SUCCEEDED record: done — or, once an abort (or an operator) ran its
 * compensation or corrective action, that the effect was reversed or corrected, or that this is
 * still under way (so an agent never tells the user "done" about an effect that was undone).
 */
function succeededMessage(record: IntentRecord): string {
  const c = record.compensation;
  if (!c || !("key" in c)) {
    return "The effect happened exactly once. Do not call this tool again for this step; tell the user it is done.";
  }
  const what = c.kind === "corrective" ? `followed by its correction (${c.tool})` : `reversed (${c.tool})`;
  return c.status === "SUCCEEDED"
    ? `The effect happened once and was later ${what}. Do not call this tool again for this step; tell the user it was ${c.kind === "corrective" ? "corrected" : "undone"}.`
    : `The effect happened once; its ${c.kind === "corrective" ? "correction" : "reversal"} (${c.tool}) has not been confirmed yet and an operator will decide. Do not call this tool again for this step; tell the user it is being undone.`;
}

/**
 * Builds the envelope for a record's current state. `PENDING` reads as UNKNOWN (in flight).
 * The wording follows the source design's example envelope.
 */
export function buildEnvelope(record: IntentRecord, ctx: EnvelopeContext): Envelope {
  const notBefore = record.error?.retryNotBeforeEpochMs;
  const retryAfterMs =
    notBefore !== undefined && ctx.nowEpochMs !== undefined && notBefore > ctx.nowEpochMs
      ? Math.ceil(notBefore - ctx.nowEpochMs)
      : undefined;
  const resolution = shownResolution(record);
  const base = {
    idempotency_key: record.key,
    attempt: record.attempt,
    replayed: ctx.replayed,
    ...(record.result !== undefined ? { result: record.result } : {}),
    ...(resolution ? { resolution } : {}),
    ...(record.error ? { error: record.error } : {}),
    ...(retryAfterMs !== undefined ? { retry_after_ms: retryAfterMs } : {}),
    ...(record.sentKey && record.sentKey !== record.key ? { sent_key: record.sentKey } : {}),
    ...(record.attempt > 1 ? { sent_args: record.args } : {}),
  };
  switch (record.status) {
    case "SUCCEEDED":
      return {
        status: "SUCCEEDED",
        retry_safe: true,
        effect: `${ctx.effectPhrase}: done`,
        action_taken:
          ctx.actionTaken ??
          (ctx.replayed ? "returned the recorded result; nothing was sent again" : succeededAction(resolution)),
        message: succeededMessage(record),
        ...base,
      };
    case "FAILED_NO_EFFECT":
      return {
        status: "FAILED_NO_EFFECT",
        retry_safe: true,
        effect: `${ctx.effectPhrase}: not done (nothing happened)`,
        action_taken:
          ctx.actionTaken ?? (ctx.replayed ? "returned the recorded failure" : "the request did not take effect"),
        message:
          retryAfterMs !== undefined
            ? `Nothing happened. The remote asked to wait ${Math.ceil(retryAfterMs / 1000)} s before another try; calling sooner sends nothing. Then you may try again (the same step), change the request, or tell the user.`
            : "Nothing happened. You may try again with the same step (the executor handles the idempotency key), change the request, or tell the user.",
        ...base,
      };
    case "PENDING":
    case "UNKNOWN": {
      const inFlight = record.status === "PENDING" || record.error?.code === "IN_FLIGHT";
      return {
        status: "UNKNOWN",
        retry_safe: false,
        effect: `${ctx.effectPhrase}: may or may not have happened`,
        action_taken:
          ctx.actionTaken ??
          (record.needsHuman
            ? ctx.operatorNotified
              ? "reconciliation could not decide; an operator has been notified to confirm"
              : "reconciliation could not decide; the record waits in the human queue for an operator to confirm"
            : inFlight
              ? "another call for this step is still in flight; reconciliation follows if it does not finish"
              : "reconciliation scheduled"),
        message:
          "Do not do this again. Tell the user it is being confirmed; calling again for this step only reports the status.",
        ...base,
      };
    }
  }
}

function succeededAction(resolution: Resolution | null): string {
  switch (resolution) {
    case "found":
      return "the outcome was unknown; a probe found the effect";
    case "absent_resent":
      return "the outcome was unknown; probes found nothing, so it was resent once with the same key";
    case "human_confirmed_effect":
      return "an operator confirmed the effect";
    case "human_resent":
      return "an operator resent it with the same key";
    case "human_confirmed_no_effect":
    case "needs_human":
    case null:
      return "sent once";
  }
}

/** Envelope for a call refused before anything was recorded or sent (bad input, no budget, conflict). */
export function refusalEnvelope(fields: {
  key: string;
  effectPhrase: string;
  error: IntentError;
  retrySafe: boolean;
  message: string;
}): Envelope {
  return {
    status: "FAILED_NO_EFFECT",
    retry_safe: fields.retrySafe,
    effect: `${fields.effectPhrase}: not done (nothing was sent)`,
    action_taken: "refused before sending; nothing was recorded or sent",
    message: fields.message,
    idempotency_key: fields.key,
    attempt: 0,
    replayed: false,
    error: fields.error,
  };
}
