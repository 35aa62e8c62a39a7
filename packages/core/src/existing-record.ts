/**
 * A call for a step that already has an intent record, and the send that follows a claim
 * (DESIGN.md rules 1–4, with rule 5 for unsettled records).
 */
import { storedArgsForHooks } from "./call-input.ts";
import { isCompensationStep } from "./compensation.ts";
import type { Deadline } from "./deadline.ts";
import { type Envelope, refusalEnvelope } from "./envelope.ts";
import { attemptKey } from "./idempotency-key.ts";
import type { IntentRecord } from "./intent-store.ts";
import type { JsonValue } from "./json.ts";
import { leasedUntil, settlesAtForSend, storeNow, takeOverLease } from "./lease.ts";
import { reconcile } from "./reconcile.ts";
import { effectPhrase, envelopeFor } from "./record-envelope.ts";
import { event } from "./record-events.ts";
import { runAbortedRefusal } from "./run-abort-refusal.ts";
import type { Runtime } from "./runtime.ts";
import { sendOnce } from "./send.ts";
import type { AnyTool } from "./tool.ts";

/** The new call's arguments: as persisted (JSON) and as the tool's schema parsed them. */
export interface CallArgs {
  persisted: JsonValue;
  parsed: unknown;
}

/**
 * A record already exists for this key or this (run, step, tool): rules 1–5.
 * @param timeoutMs - the new call's per-call timeout, or null when its budget allows no send.
 */
export async function onExisting(
  rt: Runtime,
  tool: AnyTool,
  existing: IntentRecord,
  key: string,
  deadline: Deadline,
  timeoutMs: number | null,
  args: CallArgs,
): Promise<Envelope> {
  let record = existing;
  for (let round = 0; round < 5; round++) {
    if (record.key !== key) return conflict(rt, tool, record, key);
    const now = rt.clock.nowEpochMs();
    switch (record.status) {
      case "SUCCEEDED":
        return envelopeFor(rt, record, true); // rule 1
      case "FAILED_NO_EFFECT": {
        if (timeoutMs === null) return envelopeFor(rt, record, true);
        const notBefore = record.error?.retryNotBeforeEpochMs;
        if (notBefore !== undefined && notBefore > (await storeNow(rt))) {
          // The remote asked for time (Retry-After): answer without sending (issue 9 §7).
          return envelopeFor(rt, record, true, "nothing was sent: the remote asked to wait before another try");
        }
        // Rule 13: a new attempt is a new send, refused in an aborted run (a compensation's is not).
        const abort = isCompensationStep(record.stepId) ? null : await rt.store.getRunAbort(record.runId);
        if (abort) return runAbortedRefusal(key, effectPhrase(tool, tool.name, args.parsed, record.identity), abort);
        // Rule 3: a new attempt keeps the record's key and sends the new call's arguments. After a
        // definite answer the remote may have cached under the key, it travels under a fresh key.
        const attempt = record.attempt + 1;
        const sentKey = answeredUnderKey(record) ? attemptKey(record.key, attempt) : record.sentKey;
        const next = await rt.store.update(
          key,
          record.version,
          {
            status: "PENDING",
            attempt,
            ...leasedUntil(deadline.epochMs),
            error: null,
            resolution: null,
            needsHuman: false,
            finishedAtEpochMs: null,
            args: args.persisted,
            sentKey,
            settlesAtEpochMs: await settlesAtForSend(rt, tool, deadline),
          },
          [
            event(rt, key, "created", {
              attempt,
              deadlineEpochMs: deadline.epochMs,
              retryOf: "FAILED_NO_EFFECT",
              ...(sentKey !== record.sentKey && sentKey ? { sentKey } : {}),
            }),
          ],
          now,
        );
        if (next) return sendFirst(rt, tool, next, deadline, timeoutMs, args.parsed);
        break; // lost the race: look again
      }
      case "PENDING": {
        // Rule 2: a lease that has not passed (by the store's clock, rule 9) belongs to a call in flight.
        const taken = await takeOverLease(rt, tool, record);
        if (taken.kind === "live") return inFlight(rt, taken.record);
        if (taken.kind === "taken") return reconcileRecord(rt, tool, taken.record, deadline);
        break;
      }
      case "UNKNOWN":
        return reconcileRecord(rt, tool, record, deadline);
    }
    const again = await rt.store.get(key);
    if (!again) throw new Error(`intent record ${key} disappeared`);
    record = again;
  }
  return envelopeFor(rt, record, true);
}

/**
 * Whether the remote gave a definite answer it may have cached under the sent key (a 402 decline,
 * a 400, a refusal read back by the key probe: code `REJECTED`): a new attempt then travels under a
 * fresh key (rule 3). "Later" answers — 429, or any answer with `Retry-After` — are not cached by key
 * stores (Stripe: "Results are only saved if an API endpoint started executing"), so the key stays,
 * as it does when nothing reached the remote.
 */
function answeredUnderKey(record: IntentRecord): boolean {
  const e = record.error;
  return e?.code === "REJECTED" && e.httpStatus !== 429 && e.retryAfterMs === undefined;
}

/** The envelope for a record whose owner's call is still in flight: UNKNOWN, change nothing. */
export function inFlight(rt: Runtime, record: IntentRecord): Envelope {
  return envelopeFor(
    rt,
    { ...record, error: record.error ?? { code: "IN_FLIGHT", message: "a call for this step is in flight" } },
    true,
  );
}

function reconcileRecord(rt: Runtime, tool: AnyTool, record: IntentRecord, deadline: Deadline): Promise<Envelope> {
  if (record.needsHuman && !tool.probe && !tool.probeByIdentity) {
    // Nothing new can be learnt without a probe: report, write nothing, send nothing.
    return Promise.resolve(envelopeFor(rt, record, true));
  }
  return reconcile(rt, tool, record, deadline, "call");
}

/**
 * Sends a record this call has just claimed (or moved to a new attempt), then reconciles right away
 * when the outcome is UNKNOWN and no person has to decide.
 */
export async function sendFirst(
  rt: Runtime,
  tool: AnyTool,
  record: IntentRecord,
  deadline: Deadline,
  timeoutMs: number,
  parsedArgs: unknown,
): Promise<Envelope> {
  const sent = await sendOnce(rt, tool, record, deadline, timeoutMs, {
    resolutionOnSuccess: null,
    spanName: `invoke ${tool.name}`,
    parsedArgs,
  });
  switch (sent.kind) {
    case "settled":
      return sent.envelope;
    case "unknown":
      if (sent.record.needsHuman) return envelopeFor(rt, sent.record, false);
      return reconcile(rt, tool, sent.record, deadline, "after_unknown");
    case "lost":
      if (!sent.record) throw new Error(`intent record ${record.key} disappeared`);
      return envelopeFor(rt, sent.record, false);
  }
}

/** The same (run, step, tool) with a different identity (rule 4): refused. */
async function conflict(rt: Runtime, tool: AnyTool, existing: IntentRecord, key: string): Promise<Envelope> {
  await rt.store.appendEvents([event(rt, existing.key, "conflict", { refusedKey: key })]);
  const phrase = effectPhrase(tool, tool.name, storedArgsForHooks(tool, existing.args), existing.identity);
  return refusalEnvelope({
    key,
    effectPhrase: `a different ${tool.name} in step ${existing.stepId}`,
    error: {
      code: "IDEMPOTENCY_CONFLICT",
      message: `step ${existing.stepId} of run ${existing.runId} already holds ${phrase} (key ${existing.key}, ${existing.status}); one step, one effect`,
      field: "args",
      rule: "the identity fields must match the step's first call",
    },
    retrySafe: false,
    message: `This step already did ${phrase}. A different ${tool.name} needs its own step id; do not reuse this step for it.`,
  });
}
