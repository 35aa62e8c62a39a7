import { isCompensationStep } from "./compensation.ts";
import type { Deadline } from "./deadline.ts";
import type { Envelope } from "./envelope.ts";
import { isDeadlineExceededError } from "./errors.ts";
import { afterWrite, type ReconcileTrigger, stayUnknown, toHuman } from "./human-queue.ts";
import type { IntentEvent, IntentRecord } from "./intent-store.ts";
import { leasedUntil, settlesAtForSend, storeClockNow, storeNow } from "./lease.ts";
import {
  absenceMustBeProof,
  type DecisionInput,
  decideReconcile,
  type ReconcileDecision,
} from "./reconcile-decision.ts";
import { gatherEvidence, type ReconcileEvidence } from "./reconcile-evidence.ts";
import { envelopeFor } from "./record-envelope.ts";
import { event } from "./record-events.ts";
import type { Runtime } from "./runtime.ts";
import { sendOnce } from "./send.ts";
import { settleFound, settleRefused } from "./settle.ts";
import type { AnyTool } from "./tool.ts";
import { inSpan } from "./tracing.ts";

export type { ReconcileTrigger } from "./human-queue.ts";

/**
 * Reconciles an UNKNOWN record (DESIGN.md rule 5; source design's `reconcile`): evidence first,
 * spaced probes; found in any state → SUCCEEDED (`found`), unless an identity match belongs to
 * another record (rule 5g); absent → resend once with the same key and the persisted arguments,
 * only when that is safe: the remote dedupes the key, or the probes ran after the tool's settle
 * window (rule 5b) — before it the record stays UNKNOWN and is due again when absence can be
 * conclusive; no evidence possible → `needs_human`; a failing probe is no evidence (stays UNKNOWN
 * for the sweeper). A `Retry-After` still running defers the resend. Never resends blindly.
 *
 * Three steps: {@link gatherEvidence} probes, {@link decideReconcile} decides (pure), and this
 * function performs the decision.
 * @param freshAttempt - the caller knows no probe round of the current attempt is on record (the
 *   record has just left PENDING: its send's outcome, or a lease taken over), so the timeline is not
 *   read for them. Implied by the `after_unknown` trigger.
 */
export async function reconcile(
  rt: Runtime,
  tool: AnyTool,
  record: IntentRecord,
  deadline: Deadline,
  trigger: ReconcileTrigger,
  freshAttempt = false,
): Promise<Envelope> {
  return inSpan(
    rt,
    `reconcile ${tool.name}`,
    { "tristate.idempotency_key": record.key, "tristate.trigger": trigger },
    async () => {
      // Key retention by the store's clock, which wrote `createdAt` (rule 9; issue 21 §6).
      const keyValid = (await storeClockNow(rt)) - record.createdAtEpochMs <= tool.keyRetentionMs;
      const evidence = await gatherEvidence(rt, {
        tool,
        record,
        deadline,
        trigger,
        freshAttempt,
        keyValid,
        absenceMustBeProof: absenceMustBeProof(tool, keyValid),
      });
      const input: DecisionInput = {
        evidence,
        record,
        tool,
        trigger,
        keyValid,
        maxReconcileSweeps: rt.maxReconcileSweeps,
      };
      let decision = decideReconcile(input);
      if (decision.kind === "read_store_clock") {
        decision = decideReconcile({ ...input, storeNowEpochMs: await storeNow(rt) });
      }
      return perform(rt, tool, record, deadline, decision, unsavedEvents(evidence));
    },
  );
}

/** The probe events the evidence leaves to be written with the decision. */
function unsavedEvents(evidence: ReconcileEvidence): IntentEvent[] {
  return evidence.kind === "not_gathered" || evidence.kind === "no_probe" ? [] : evidence.events;
}

/** Carries out a decision of {@link decideReconcile}, writing `events` with it. */
async function perform(
  rt: Runtime,
  tool: AnyTool,
  record: IntentRecord,
  deadline: Deadline,
  decision: ReconcileDecision,
  events: IntentEvent[],
): Promise<Envelope> {
  switch (decision.kind) {
    case "leave":
      return envelopeFor(rt, record, true);
    case "settle_found":
      return settleFound(rt, record, tool, decision.effect, events);
    case "settle_refused":
      return settleRefused(rt, record, tool, decision.answer, events);
    case "to_human": {
      const sweeps = decision.reconcileSweeps;
      return toHuman(
        rt,
        sweeps === undefined ? record : { ...record, reconcileSweeps: sweeps },
        decision.code,
        events,
        decision.message,
        {
          tool,
          trigger: decision.trigger,
        },
      );
    }
    case "stay_unknown":
      return stayUnknown(
        rt,
        record,
        events,
        { code: decision.code, message: decision.message },
        decision.trigger,
        tool,
        decision.recheckAtEpochMs,
        decision.settlesAtEpochMs === undefined ? {} : { settlesAtEpochMs: decision.settlesAtEpochMs },
      );
    case "resend":
      return resend(rt, tool, record, deadline, decision, events);
    case "read_store_clock":
      throw new Error("reconcile: the decision asked for the store's clock twice");
    default:
      return unknownDecision(decision);
  }
}

function unknownDecision(decision: never): never {
  throw new Error(`unknown reconcile decision: ${JSON.stringify(decision)}`);
}

/**
 * Resends once with the same key and the persisted arguments (a decision's `resend`): takes the
 * record back to PENDING (compare-and-set: only one reconciler may resend), then sends. Without the
 * budget for the send it stays UNKNOWN for the sweeper.
 */
async function resend(
  rt: Runtime,
  tool: AnyTool,
  record: IntentRecord,
  deadline: Deadline,
  { why, reconcileSweeps: sweeps, readBack }: { why: string; reconcileSweeps: number; readBack?: true },
  events: IntentEvent[],
): Promise<Envelope> {
  const now = rt.clock.nowEpochMs();
  let timeoutMs: number;
  try {
    timeoutMs = deadline.timeoutFor(tool.timeoutMs, rt.reserveMs, rt.minCallBudgetMs);
  } catch (error) {
    if (!isDeadlineExceededError(error)) throw error;
    return stayUnknown(
      rt,
      record,
      events,
      { code: "DEADLINE_EXCEEDED", message: `resend due (${why}) but no budget left; the sweeper will go on` },
      "call",
      tool,
    );
  }
  // Rule 13: a resend of a step whose run was aborted would make the effect the abort undoes. It
  // waits for a person instead (found later, it is compensated). A read-back re-asks the remote for
  // the stored answer of an effect a probe found: no new effect, so it goes on.
  if (!readBack && !isCompensationStep(record.stepId) && (await rt.store.getRunAbort(record.runId))) {
    return toHuman(
      rt,
      record,
      "RUN_ABORTED",
      events,
      `a resend was due (${why}), but its run was aborted, so it is not resent: confirm whether it happened, and compensate it if it did`,
      { tool, trigger: "call" },
    );
  }
  // Take the record (compare-and-set): only one reconciler may resend.
  const owned = await rt.store.update(
    record.key,
    record.version,
    {
      status: "PENDING",
      attempt: record.attempt + 1,
      ...leasedUntil(deadline.epochMs),
      error: null,
      reconcileSweeps: sweeps,
      settlesAtEpochMs: await settlesAtForSend(rt, tool, deadline),
    },
    [
      ...events,
      event(rt, record.key, "resend", { reason: why, attempt: record.attempt + 1, ...(readBack ? { readBack } : {}) }),
    ],
    now,
  );
  if (!owned) return afterWrite(rt, record.key, null, []);
  const sent = await sendOnce(rt, tool, owned, deadline, timeoutMs, {
    // A read-back's 2xx is the stored answer of the original the probe found: `found`.
    resolutionOnSuccess: readBack ? "found" : "absent_resent",
    spanName: `resend ${tool.name}`,
    ...(readBack ? { readBack } : {}),
  });
  switch (sent.kind) {
    case "settled":
      return sent.envelope;
    case "unknown":
      return envelopeFor(
        rt,
        sent.record,
        false,
        sent.record.needsHuman
          ? `resent once with the same key; the resend was refused, which proves nothing about the original; ${rt.humanQueueNotified?.() === true ? "an operator has been notified to confirm" : "the record waits in the human queue for an operator to confirm"}`
          : "resent once with the same key; the outcome is unknown again; reconciliation scheduled",
      );
    case "lost":
      return afterWrite(rt, record.key, null, []);
  }
}
