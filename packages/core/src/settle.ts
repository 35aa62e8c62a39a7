/**
 * Settling a record from what a probe found (DESIGN.md rule 5a): the effect itself (SUCCEEDED
 * `found`), or the remote's stored refusal of the key's request read back by the key probe
 * (FAILED_NO_EFFECT, when nothing else was ever sent under that key).
 */
import { storedArgsForHooks } from "./call-input.ts";
import { registeredCompensation } from "./compensation.ts";
import type { Envelope } from "./envelope.ts";
import { afterWrite } from "./human-queue.ts";
import { attemptKey } from "./idempotency-key.ts";
import type { IntentEvent, IntentPatch, IntentRecord } from "./intent-store.ts";
import { toJson } from "./json.ts";
import { foundAfterAbort } from "./late-answer.ts";
import { event } from "./record-events.ts";
import type { Runtime } from "./runtime.ts";
import type { AnyTool } from "./tool.ts";
import { outcomeNotStorable } from "./unstorable-outcome.ts";
import { isWriteRefusedError } from "./write-refused.ts";

/**
 * A probe found the effect: SUCCEEDED `found`, the compensation filled from it. An effect found
 * after its run was aborted stays in the human queue (`RUN_ABORTED`), to be compensated.
 */
export async function settleFound(
  rt: Runtime,
  record: IntentRecord,
  tool: AnyTool | undefined,
  found: unknown,
  events: IntentEvent[],
): Promise<Envelope> {
  const now = rt.clock.nowEpochMs();
  let result: ReturnType<typeof toJson>;
  try {
    result = toJson(found);
  } catch {
    result = { found: String(found) };
  }
  const patch: IntentPatch = {
    status: "SUCCEEDED",
    result,
    resolution: "found",
    // Found after its run was aborted: the effect stays in the queue, to be compensated.
    ...(record.needsHuman && record.error?.code === "RUN_ABORTED"
      ? { needsHuman: true, error: foundAfterAbort() }
      : { needsHuman: false, error: null }),
    finishedAtEpochMs: now,
    settlesAtEpochMs: null,
    ...(record.compensation && tool
      ? { compensation: registeredCompensation(tool, storedArgsForHooks(tool, record.args), result) }
      : {}),
  };
  let updated: IntentRecord | null;
  try {
    const outcome = event(rt, record.key, "outcome", { outcome: "SUCCEEDED", resolution: "found" });
    updated = await rt.store.update(record.key, record.version, patch, [...events, outcome], now);
  } catch (error) {
    // A find the log refuses for good goes to a person, never a retry on every sweep (issue 21 §3).
    if (!isWriteRefusedError(error)) throw error;
    const source = "a probe found the effect (SUCCEEDED, found)";
    updated = await outcomeNotStorable(rt, tool, record, { patch, now }, error, source);
    return afterWrite(rt, record.key, updated, []);
  }
  return afterWrite(rt, record.key, updated, events);
}

/**
 * True when the record's current wire key has been sent exactly once (by this attempt): the key's
 * first attempt is 1 for the record's own key, n for `attemptKey(key, n)`. Resends keep the key
 * and bump the attempt, so afterwards this is false.
 */
export function sentOnceUnderWireKey(record: IntentRecord): boolean {
  return record.sentKey === null ? record.attempt === 1 : record.sentKey === attemptKey(record.key, record.attempt);
}

/**
 * The key probe read back the remote's own refusal of this key's request: the original was
 * processed and did nothing. FAILED_NO_EFFECT, the refusal kept (the agent may try again: a new
 * attempt travels under a fresh key, since the remote has an answer stored under this one).
 */
export async function settleRefused(
  rt: Runtime,
  record: IntentRecord,
  _tool: AnyTool,
  answer: { detail: string; httpStatus?: number },
  events: IntentEvent[],
): Promise<Envelope> {
  const now = rt.clock.nowEpochMs();
  const updated = await rt.store.update(
    record.key,
    record.version,
    {
      status: "FAILED_NO_EFFECT",
      error: {
        code: "REJECTED",
        message: `the remote's record of this request shows it was refused: ${answer.detail}`,
        ...(answer.httpStatus !== undefined ? { httpStatus: answer.httpStatus } : {}),
      },
      needsHuman: false,
      resolution: null,
      finishedAtEpochMs: now,
      settlesAtEpochMs: null,
    },
    [...events, event(rt, record.key, "outcome", { outcome: "FAILED_NO_EFFECT", code: "REJECTED", via: "key_probe" })],
    now,
  );
  return afterWrite(rt, record.key, updated, events);
}
