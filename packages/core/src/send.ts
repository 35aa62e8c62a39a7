import { classifyError } from "./classify.ts";
import type { Deadline } from "./deadline.ts";
import type { Envelope } from "./envelope.ts";
import type { IntentError, IntentRecord } from "./intent-store.ts";
import { toJson } from "./json.ts";
import { envelopeFor, event, inSpan, type Runtime, timeoutSignal } from "./runtime.ts";
import { registeredCompensation } from "./saga.ts";
import type { Resolution } from "./statuses.ts";
import type { AnyTool } from "./tool.ts";

/** What {@link sendOnce} did. */
export type SendResult =
  | { kind: "settled"; record: IntentRecord; envelope: Envelope }
  /** Ambiguous: the record is now UNKNOWN (reconcile next, if the caller wants). */
  | { kind: "unknown"; record: IntentRecord }
  /** Someone else changed the record while we were sending; `record` is its current state. */
  | { kind: "lost"; record: IntentRecord | null };

/**
 * Sends the persisted arguments of a PENDING record that this call owns (it holds `record.version`),
 * and writes the outcome. The record must already say PENDING: the intent is durable before a byte
 * leaves (source design's `call_tool`). `timeoutMs` was checked against the deadline by the caller.
 */
export async function sendOnce(
  rt: Runtime,
  tool: AnyTool,
  record: IntentRecord,
  deadline: Deadline,
  timeoutMs: number,
  options: { resolutionOnSuccess: Resolution | null; spanName: string },
): Promise<SendResult> {
  return inSpan(
    rt,
    options.spanName,
    { "tristate.idempotency_key": record.key, "tristate.attempt": record.attempt },
    async (setAttributes) => {
      const sentAt = rt.clock.nowEpochMs();
      const { signal, dispose } = timeoutSignal(timeoutMs);
      let outcome: { ok: true; value: unknown } | { ok: false; error: unknown };
      try {
        const value = await tool.invoke(record.args, {
          idempotencyKey: record.key,
          signal,
          timeoutMs,
          deadline,
          attempt: record.attempt,
        });
        outcome = { ok: true, value };
      } catch (error) {
        outcome = { ok: false, error };
      } finally {
        dispose();
      }
      const now = rt.clock.nowEpochMs();
      const sent = event(rt, record.key, "sent", { attempt: record.attempt, timeoutMs });
      sent.atEpochMs = sentAt;
      const durable = rt.durableOutcomes || !lostOutcomeIsCheap(tool);

      if (outcome.ok) {
        let result: ReturnType<typeof toJson>;
        try {
          result = toJson(outcome.value);
        } catch {
          result = { unserialisable: String(outcome.value) };
        }
        setAttributes({ "tristate.outcome": "SUCCEEDED" });
        const updated = await rt.store.update(
          record.key,
          record.version,
          {
            status: "SUCCEEDED",
            result,
            error: null,
            resolution: options.resolutionOnSuccess,
            needsHuman: false,
            finishedAtEpochMs: now,
            ...(record.compensation ? { compensation: registeredCompensation(tool, record.args, result) } : {}),
          },
          [sent, event(rt, record.key, "outcome", { outcome: "SUCCEEDED", durationMs: now - sentAt })],
          now,
          { durable },
        );
        if (!updated) return { kind: "lost", record: await rt.store.get(record.key) };
        return { kind: "settled", record: updated, envelope: envelopeFor(rt, updated, false) };
      }

      const c = classifyError(outcome.error);
      const error: IntentError = {
        code: c.code,
        message: c.message,
        ...(c.httpStatus !== undefined ? { httpStatus: c.httpStatus } : {}),
        ...(c.retryAfterMs !== undefined ? { retryAfterMs: c.retryAfterMs } : {}),
      };
      setAttributes({ "tristate.outcome": c.outcome, "error.type": c.code });
      if (c.outcome === "FAILED_NO_EFFECT") {
        const updated = await rt.store.update(
          record.key,
          record.version,
          {
            status: "FAILED_NO_EFFECT",
            error,
            finishedAtEpochMs: now,
            // a resend that was refused still ended an UNKNOWN: keep how (absent_resent / human_resent)
            ...(options.resolutionOnSuccess ? { resolution: options.resolutionOnSuccess } : {}),
          },
          [
            sent,
            event(rt, record.key, "outcome", { outcome: "FAILED_NO_EFFECT", code: c.code, durationMs: now - sentAt }),
          ],
          now,
          { durable },
        );
        if (!updated) return { kind: "lost", record: await rt.store.get(record.key) };
        return { kind: "settled", record: updated, envelope: envelopeFor(rt, updated, false) };
      }
      // UNKNOWN: durable, since the next step (reconciliation, the human queue) depends on it.
      const updated = await rt.store.update(
        record.key,
        record.version,
        { status: "UNKNOWN", error },
        [sent, event(rt, record.key, "outcome", { outcome: "UNKNOWN", code: c.code, durationMs: now - sentAt })],
        now,
      );
      if (!updated) return { kind: "lost", record: await rt.store.get(record.key) };
      return { kind: "unknown", record: updated };
    },
  );
}

/**
 * A lost outcome write leaves the record PENDING; the sweeper then reconciles it. That costs only a
 * probe when the tool has one, or a deduplicated resend when the remote honours keys; otherwise it
 * would cost a person, so such outcomes are written durably.
 */
function lostOutcomeIsCheap(tool: AnyTool): boolean {
  return Boolean(tool.probe || tool.probeByIdentity || tool.kind === "idempotent_by_key");
}
