import { markRecord } from "./answer-by.ts";
import { applied, writeInBackground } from "./background-write.ts";
import { storedArgsForHooks } from "./call-input.ts";
import type { Classification } from "./classify/index.ts";
import { registeredCompensation } from "./compensation.ts";
import type { Deadline } from "./deadline.ts";
import type { Envelope } from "./envelope.ts";
import { humanRecheckAt } from "./human-queue.ts";
import type { IntentError, IntentEvent, IntentPatch, IntentRecord } from "./intent-store.ts";
import { toJson } from "./json.ts";
import { lateAnswer } from "./late-answer.ts";
import { recheckAt, storeNow } from "./lease.ts";
import { envelopeFor } from "./record-envelope.ts";
import { event } from "./record-events.ts";
import { redactArgs } from "./redact.ts";
import type { Runtime } from "./runtime.ts";
import { attemptsOf, classifyOutcome, invokeOnce, type SendOutcome } from "./send-invoke.ts";
import type { StoredResolution } from "./statuses.ts";
import type { AnyTool } from "./tool.ts";
import { toolKindPolicy } from "./tool-kind-policy.ts";
import { inSpan } from "./tracing.ts";
import { outcomeNotStorable } from "./unstorable-outcome.ts";
import { isWriteRefusedError } from "./write-refused.ts";

/** What {@link sendOnce} did. */
export type SendResult =
  | { kind: "settled"; record: IntentRecord; envelope: Envelope }
  /** Ambiguous: the record is now UNKNOWN (reconcile next unless it waits for a person: `needsHuman`). */
  | { kind: "unknown"; record: IntentRecord }
  /** Someone else changed the record while we were sending; `record` is its current state. */
  | { kind: "lost"; record: IntentRecord | null };

/** Options of {@link sendOnce}. */
export interface SendOptions {
  /**
   * The resolution this send writes when it settles an UNKNOWN (`absent_resent`, `human_resent`):
   * set exactly for resends after an UNKNOWN original; null for a first send or a new attempt.
   */
  resolutionOnSuccess: StoredResolution | null;
  spanName: string;
  /** The call's schema-parsed arguments, when the caller has them; else `record.args` is parsed again. */
  parsedArgs?: unknown;
  /**
   * A same-key resend that reads back the remote's stored answer to the original (a probe found the
   * original's item under the key, and the remote dedupes the key): a refusal it replays from its
   * key store is the original's own answer — FAILED_NO_EFFECT `REJECTED` (see `storedRefusal`).
   */
  readBack?: true;
}

/**
 * Sends the persisted arguments of a PENDING record that this call owns (it holds `record.version`),
 * schema-parsed, under the key of its current attempt (`sentKey` or the record's key), and writes
 * the outcome. The record must already say PENDING: the intent is durable before a byte leaves
 * (source design's `call_tool`). `timeoutMs` was checked against the deadline by the caller.
 *
 * A resend after an UNKNOWN original (`resolutionOnSuccess` set) that is refused (4xx, 422) proves
 * nothing about the original (rule 5f): the record stays UNKNOWN and waits for a person, the refusal
 * kept as evidence; one that was not sent leaves the original UNKNOWN. An answer that arrives after
 * another process took the record over is recorded and settles it while it is UNKNOWN (rule 10).
 * Stored messages never hold non-loggable argument values.
 */
export async function sendOnce(
  rt: Runtime,
  tool: AnyTool,
  record: IntentRecord,
  deadline: Deadline,
  timeoutMs: number,
  options: SendOptions,
): Promise<SendResult> {
  return inSpan(
    rt,
    options.spanName,
    { "tristate.idempotency_key": record.key, "tristate.attempt": record.attempt },
    async (setAttributes) => {
      const sentAt = rt.clock.nowEpochMs();
      const outcome = await invokeOnce(rt, tool, record, deadline, timeoutMs, options);
      const now = rt.clock.nowEpochMs();
      const sentEvents = sentEventsOf(rt, record, outcome, timeoutMs, sentAt);
      const durable = rt.durableOutcomes || !lostOutcomeIsCheap(tool, record, rt.clock.nowEpochMs());
      const outcomeEvent = (data: Record<string, string | number | boolean>) =>
        event(rt, record.key, "outcome", { ...data, durationMs: now - sentAt, ...attemptsOf(tool, record, outcome) });

      if (outcome.ok) {
        let result: ReturnType<typeof toJson>;
        try {
          result = toJson(outcome.value);
        } catch {
          result = { unserialisable: String(outcome.value) };
        }
        setAttributes({ "tristate.outcome": "SUCCEEDED" });
        return write(rt, tool, record, {
          patch: {
            status: "SUCCEEDED",
            result,
            error: null,
            resolution: options.resolutionOnSuccess,
            needsHuman: false,
            finishedAtEpochMs: now,
            settlesAtEpochMs: null,
            ...(record.compensation
              ? { compensation: registeredCompensation(tool, storedArgsForHooks(tool, record.args), result) }
              : {}),
          },
          events: [...sentEvents, outcomeEvent({ outcome: "SUCCEEDED" })],
          now,
          durable,
          // Only the agent's own send: a resend (the sweeper's, an operator's) is answered after its write,
          // so the resolution it reports (`absent_resent`, `human_resent`) is the one the log keeps.
          background: !durable && rt.backgroundOutcomes && options.resolutionOnSuccess === null,
        });
      }

      const c = classifyOutcome(outcome);
      const error: IntentError = {
        code: c.code,
        message: redactArgs(tool, record.args, c.message),
        ...(c.httpStatus !== undefined ? { httpStatus: c.httpStatus } : {}),
        ...(c.retryAfterMs !== undefined
          ? // In the store's clock, so every replica honours the same instant (rule 9).
            { retryAfterMs: c.retryAfterMs, retryNotBeforeEpochMs: (await storeNow(rt)) + c.retryAfterMs }
          : {}),
      };
      setAttributes({ "tristate.outcome": c.outcome, "error.type": c.code });
      const resend = options.resolutionOnSuccess !== null;
      // A read-back's stored refusal is the original's own answer (issue 21 §5), unlike rule 5f's.
      if (options.readBack && c.outcome === "FAILED_NO_EFFECT" && storedRefusal(c)) {
        const events = [
          ...sentEvents,
          outcomeEvent({ outcome: "FAILED_NO_EFFECT", code: "REJECTED", via: "read_back" }),
        ];
        return readBackRefused(rt, tool, record, error, events, now);
      }
      // A resend answered 409 is refused too (rule 5f): the original may be what the remote is
      // holding on to, and another same-key resend would only be answered the same way.
      if (resend && (c.outcome === "FAILED_NO_EFFECT" || c.httpStatus === 409)) {
        return resendFailed(rt, tool, record, c, error, sentEvents, now, options);
      }
      if (c.outcome === "FAILED_NO_EFFECT") {
        return write(rt, tool, record, {
          patch: { status: "FAILED_NO_EFFECT", error, finishedAtEpochMs: now, settlesAtEpochMs: null },
          events: [...sentEvents, outcomeEvent({ outcome: "FAILED_NO_EFFECT", code: c.code })],
          now,
          // Durable whatever the tool: the agent is told `retry_safe: true` and may act on it; were
          // this write lost, the sweeper could resend (same key) an effect the agent was told is not there.
          durable: true,
        });
      }
      if (c.code === "PARTIAL_EFFECT" || c.code === "REPEATED_WRITE") {
        // Part of the request took effect, or a client's own retry wrote it twice (issue 21 §2): no
        // probe can say "done once" or "not done"; a person decides.
        return write(rt, tool, record, {
          patch: {
            status: "UNKNOWN",
            error,
            needsHuman: true,
            resolution: null,
            ...recheckAt(record, humanRecheckAt(rt, undefined, 0, now)),
            settlesAtEpochMs: null,
          },
          events: [
            ...sentEvents,
            outcomeEvent({ outcome: "UNKNOWN", code: c.code }),
            event(rt, record.key, "needs_human", { code: c.code, reason: error.message }),
          ],
          now,
          durable: true,
        });
      }
      // UNKNOWN: durable, since the next step (reconciliation, the human queue) depends on it. The
      // settle window now runs from the end of this send, by the store's clock.
      const settlesAtEpochMs =
        tool.settleMs === undefined
          ? null
          : Math.min(record.settlesAtEpochMs ?? Infinity, (await storeNow(rt)) + tool.settleMs);
      return write(rt, tool, record, {
        patch: { status: "UNKNOWN", error, settlesAtEpochMs },
        events: [...sentEvents, outcomeEvent({ outcome: "UNKNOWN", code: c.code })],
        now,
        durable: true,
      });
    },
  );
}

/**
 * A same-key read-back was answered with the remote's stored refusal of the original: the original
 * was processed and did nothing — FAILED_NO_EFFECT `REJECTED`, written durably (the agent is told
 * `retry_safe: true`; its next attempt travels under a fresh key, since the remote has this one's answer).
 */
function readBackRefused(
  rt: Runtime,
  tool: AnyTool,
  record: IntentRecord,
  error: IntentError,
  events: IntentEvent[],
  now: number,
): Promise<SendResult> {
  const message = `the remote's stored answer to this request, read back under the same key: ${error.message}`;
  return write(rt, tool, record, {
    patch: {
      status: "FAILED_NO_EFFECT",
      error: { ...error, code: "REJECTED", message },
      needsHuman: false,
      resolution: null,
      finishedAtEpochMs: now,
      settlesAtEpochMs: null,
    },
    events,
    now,
    durable: true,
  });
}

/**
 * A read-back's refusal that the remote replayed from its key store: an HTTP refusal other than 409
 * (the key's request still in flight), 422 (the key reused with another body: nothing replayed) and
 * 429 or one with a `Retry-After` (the resend itself was turned away, not answered from the store).
 */
function storedRefusal(c: Classification): boolean {
  const status = c.httpStatus;
  return status !== undefined && ![409, 422, 429].includes(status) && c.retryAfterMs === undefined;
}

/**
 * A resend after an UNKNOWN original ended without an effect of its own. Refused by the remote:
 * the refusal ("already refunded") may be the original's doing, so the original stays UNKNOWN and
 * waits for a person (rule 5f). Not sent at all: the original is as unknown as before.
 */
function resendFailed(
  rt: Runtime,
  tool: AnyTool,
  record: IntentRecord,
  c: Classification,
  error: IntentError,
  events: IntentEvent[],
  now: number,
  options: SendOptions,
): Promise<SendResult> {
  const refused = c.httpStatus !== undefined || c.code === "REJECTED";
  const durationMs = now - (events[0]?.atEpochMs ?? now);
  const byOperator = options.resolutionOnSuccess === "human_resent";
  if (refused) {
    const message = `the resend was refused (${error.message}); a refusal is no proof that the original did nothing`;
    return write(rt, tool, record, {
      patch: {
        status: "UNKNOWN",
        needsHuman: true,
        resolution: null,
        error: { ...error, code: "RESEND_REFUSED", message },
        ...recheckAt(record, humanRecheckAt(rt, tool, record.reconcileSweeps, now)),
      },
      events: [
        ...events,
        event(rt, record.key, "outcome", {
          outcome: "UNKNOWN",
          code: "RESEND_REFUSED",
          refusedWith: c.code,
          durationMs,
        }),
        event(rt, record.key, "needs_human", { code: "RESEND_REFUSED", reason: message }),
      ],
      now,
      durable: true,
    });
  }
  return write(rt, tool, record, {
    patch: {
      status: "UNKNOWN",
      error: { ...error, message: `the resend was not sent (${error.message}); the original is still unknown` },
      ...(byOperator
        ? {
            needsHuman: true,
            resolution: null,
            ...recheckAt(record, humanRecheckAt(rt, tool, record.reconcileSweeps, now)),
          }
        : {}),
    },
    events: [
      ...events,
      event(rt, record.key, "outcome", { outcome: "UNKNOWN", code: c.code, resendNotSent: true, durationMs }),
    ],
    now,
    durable: true,
  });
}

/**
 * Writes the outcome (compare-and-set on the version this send owns); a lost write is late proof.
 * With `background` (a SUCCEEDED whose write is not durable anyway) it answers at once from the
 * record as the write will leave it, and the write (with its late-answer handling) goes on; it is
 * kept in `rt.pendingOutcomes` until it settles (see `writeInBackground`).
 */
async function write(
  rt: Runtime,
  tool: AnyTool,
  record: IntentRecord,
  w: { patch: IntentPatch; events: IntentEvent[]; now: number; durable: boolean; background?: boolean },
): Promise<SendResult> {
  if (w.background) {
    const predicted = applied(record, w.patch, w.now);
    const once = () => write(rt, tool, record, { patch: w.patch, events: w.events, now: w.now, durable: w.durable });
    const done: Promise<unknown> = writeInBackground(rt, record, w.patch.status, once).finally(() => {
      if (rt.pendingOutcomes.get(record.key) === done) rt.pendingOutcomes.delete(record.key);
    });
    rt.pendingOutcomes.set(record.key, done);
    markRecord(predicted);
    return { kind: "settled", record: predicted, envelope: envelopeFor(rt, predicted, false) };
  }
  // A SUCCEEDED is the answer from here on, should the call's time run out while it is written (issue 21 §1).
  if (w.patch.status === "SUCCEEDED") markRecord(applied(record, w.patch, w.now));
  let updated: IntentRecord | null;
  try {
    updated = await rt.store.update(record.key, record.version, w.patch, w.events, w.now, { durable: w.durable });
  } catch (error) {
    // Refused for good (a value the log can never hold): a person decides, never a retry forever (issue 21 §3).
    if (!isWriteRefusedError(error)) throw error;
    updated = await outcomeNotStorable(rt, tool, record, w, error);
  }
  if (updated) {
    markRecord(updated);
    return updated.status === "UNKNOWN"
      ? { kind: "unknown", record: updated }
      : { kind: "settled", record: updated, envelope: envelopeFor(rt, updated, false) };
  }
  return lateAnswer(rt, tool, record, w);
}

/**
 * The `sent` event of a send that started at `sentAtEpochMs`; none for one refused right before it
 * started (too little of the turn left): nothing left, so the timeline shows no send.
 */
function sentEventsOf(
  rt: Runtime,
  record: IntentRecord,
  outcome: SendOutcome,
  timeoutMs: number,
  sentAtEpochMs: number,
): IntentEvent[] {
  if (!outcome.ok && outcome.refusedBeforeSend) return [];
  const sent = event(rt, record.key, "sent", {
    attempt: record.attempt,
    timeoutMs,
    ...(record.sentKey ? { sentKey: record.sentKey } : {}),
  });
  sent.atEpochMs = sentAtEpochMs;
  return [sent];
}

/**
 * A lost outcome write leaves the record PENDING; the sweeper then reconciles it. That is cheap only
 * where the sweeper ends SUCCEEDED on its own whatever the remote's lookups show: the remote
 * deduplicates a same-key resend (`idempotent_by_key`, resent on absence, or no probe at all), so a
 * probe that lags or misses the effect costs one deduplicated resend. Elsewhere (an `unsafe` tool; a
 * keyed tool that may not be resent on absence) a lagging probe would send the record to a person —
 * who could then declare absent an effect the agent was told SUCCEEDED — or, past a settle window
 * shorter than the remote's real lag, resend it: such outcomes are written durably, and never in the
 * background (DESIGN.md rule 5; the attack reviews of issue 13). The remote must also still remember
 * the key when the sweeper gets there — after the record's lease, plus {@link LOST_OUTCOME_MARGIN_MS}
 * for a sweeper that is slow or down — or the record would go to a person (`KEY_RETENTION_EXPIRED`).
 * @param nowEpochMs - the executor's clock, epoch ms.
 */
export function lostOutcomeIsCheap(tool: AnyTool, record: IntentRecord, nowEpochMs: number): boolean {
  const probed = Boolean(tool.probe || tool.probeByIdentity);
  const keyOutlivesLease =
    record.createdAtEpochMs + tool.keyRetentionMs - Math.max(record.leaseUntilEpochMs, nowEpochMs) >=
    LOST_OUTCOME_MARGIN_MS;
  return toolKindPolicy(tool.kind).remoteDedupesKey && (tool.resendWhenAbsent || !probed) && keyOutlivesLease;
}

/** How long after a record's lease its key must still be remembered for a lost outcome to be cheap: 1 h. */
export const LOST_OUTCOME_MARGIN_MS = 3_600_000;
