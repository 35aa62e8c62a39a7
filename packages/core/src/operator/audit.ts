import { compensationSettled } from "../compensation-settled.ts";
import type { IntentPatch, IntentRecord } from "../intent-store.ts";
import type { JsonObject } from "../json.ts";
import type { AuditEntry, OperatorStore } from "../operator-store.ts";
import { envelopeFor } from "../record-envelope.ts";
import { event } from "../record-events.ts";
import { redactSecrets } from "../redact.ts";
import type { Runtime } from "../runtime.ts";
import { OperatorActionError } from "./errors.ts";
import type { OperatorActionInput, OperatorActionResult } from "./input.ts";
import { staleError } from "./latest-change.ts";
import { operatorOptions } from "./options.ts";

/** What {@link applyAudited} did: the change it applied, or the answer to give instead (a replay). */
export type AuditedChange =
  | { kind: "applied"; record: IntentRecord; audit: AuditEntry }
  | { kind: "answered"; result: OperatorActionResult };

/**
 * The audited change every operator action makes: compare-and-set of the record (its version), a
 * `human_action` event and the audit row, in one transaction through the {@link OperatorStore}.
 * A repeated operatorActionId is answered from its audit row; a stale version is refused with the winner.
 * Values of the tool's `secretFields` in the note are stored as `{field}` (event and audit row).
 * @param now - epoch ms.
 * @param eventExtra - fields added to the `human_action` event (e.g. `toStatus`, `attempt`, `compensation`).
 * @returns the applied change, or the answer to give instead (a replay).
 * @throws OperatorActionError `STALE_VERSION` (with the winner) or `NOT_FOUND`.
 */
export async function applyAudited(
  rt: Runtime,
  store: OperatorStore,
  record: IntentRecord,
  input: OperatorActionInput,
  now: number,
  patch: IntentPatch,
  eventExtra: JsonObject,
): Promise<AuditedChange> {
  const note = redactSecrets(rt.tools.get(record.tool), record.args, input.note);
  const applied = await store.applyOperatorAction({
    key: record.key,
    expectedVersion: record.version,
    patch,
    events: [
      event(rt, record.key, "human_action", {
        action: input.action,
        actor: input.actor.name,
        actorKeyId: input.actor.keyId,
        note,
        operatorActionId: input.operatorActionId,
        fromStatus: record.status,
        ...eventExtra,
      }),
    ],
    nowEpochMs: now,
    audit: {
      operatorActionId: input.operatorActionId,
      actorKeyId: input.actor.keyId,
      actorName: input.actor.name,
      action: input.action,
      note,
    },
  });
  if (applied.kind === "duplicate") return { kind: "answered", result: await replay(rt, applied.audit, input) };
  if (applied.kind === "stale") {
    if (!applied.current) throw new OperatorActionError("NOT_FOUND", `no intent record with key ${input.key}`);
    throw await staleError(rt, store, applied.current, input.expectedVersion);
  }
  // Rule 13: an effect a person confirms in an aborted run is undone like any other that settles late.
  if (patch.status === "SUCCEEDED") await rt.undoIfAborted(applied.record);
  // A person's decision on a compensation tells its original (a "no effect" puts it in the queue).
  await compensationSettled(rt, applied.record).catch((error: unknown) =>
    rt.onBackgroundWriteError?.(error, applied.record.key),
  );
  return { kind: "applied", record: applied.record, audit: applied.audit };
}

/**
 * The answer to a repeated operatorActionId, from its audit row.
 * @throws OperatorActionError `ACTION_ID_REUSED` when the id was used for another record or action.
 */
export async function replay(
  rt: Runtime,
  audit: AuditEntry,
  input: OperatorActionInput,
): Promise<OperatorActionResult> {
  if (audit.key !== input.key || audit.action !== input.action) {
    throw new OperatorActionError(
      "ACTION_ID_REUSED",
      `operatorActionId ${input.operatorActionId} was already used by ${audit.actorName} for ${audit.action} on record ${audit.key}; use a new id for a new action`,
      {
        field: "operatorActionId",
        detail: { key: audit.key, action: audit.action, actor: audit.actorName, at: audit.atEpochMs },
      },
    );
  }
  const record = audit.action === "resend_same_key" ? await resendOutcome(rt, audit) : audit.after;
  const options = operatorOptions(audit.before, rt.tools.get(audit.tool), audit.atEpochMs);
  return {
    record,
    envelope: envelopeFor(rt, record, true),
    replayed: true,
    audit,
    keyExpired: options.keyExpired,
    warnings: audit.action === "resend_same_key" ? options.resendWarnings : [],
  };
}

/**
 * The outcome of an audited resend: the record once the first request's send has written it (waiting
 * while it is PENDING within the resend's lease), else the record as it is now.
 */
async function resendOutcome(rt: Runtime, audit: AuditEntry): Promise<IntentRecord> {
  for (;;) {
    const current = await rt.store.get(audit.key);
    if (!current) return audit.after;
    const now = rt.clock.nowEpochMs();
    if (current.version !== audit.after.version || current.leaseUntilEpochMs <= now) return current;
    await rt.clock.sleep(Math.min(50, current.leaseUntilEpochMs - now));
  }
}
