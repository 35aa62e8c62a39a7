import { Deadline } from "../deadline.ts";
import type { Envelope } from "../envelope.ts";
import { isDeadlineExceededError } from "../errors.ts";
import type { IntentPatch, IntentRecord } from "../intent-store.ts";
import { leasedUntil, settlesAtForSend, storeNow } from "../lease.ts";
import type { OperatorStore } from "../operator-store.ts";
import { envelopeFor } from "../record-envelope.ts";
import type { Runtime } from "../runtime.ts";
import { sendOnce } from "../send.ts";
import type { AnyTool } from "../tool.ts";
import { type AuditedChange, applyAudited } from "./audit.ts";
import { isOperatorActionError, OperatorActionError } from "./errors.ts";
import { type OperatorActionInput, type OperatorActionResult, RESEND_SLACK_MS } from "./input.ts";
import type { OperatorOptions } from "./options.ts";

/**
 * `resend_same_key` → compare-and-set to PENDING (attempt + 1, a fresh lease, audited by
 * {@link applyAudited}), then one send of the persisted original arguments with the same key;
 * SUCCEEDED gets resolution `human_resent`; an ambiguous answer leaves it UNKNOWN (out of the human
 * queue: reconciliation takes it from there, and sends it back to the queue if it cannot decide).
 * Refused for `read_only` tools and tools not in the catalog; allowed for `unsafe` ones (the human
 * decides) with warnings, and `keyExpired` when the record is older than the tool's key retention.
 * The record must be waiting for a human (the caller checked; `options` says so too).
 * @param tool - the record's tool from the catalog, undefined when not in it.
 * @param now - epoch ms.
 * @param options - the record's {@link OperatorOptions} at `now`.
 * @throws OperatorActionError `NOT_ALLOWED` (the refusal named), `INVALID_INPUT` (`deadline` too close
 *   for the tool's least budget), or what {@link applyAudited} throws. Nothing changed.
 */
export async function resendAsOperator(
  rt: Runtime,
  store: OperatorStore,
  record: IntentRecord,
  input: OperatorActionInput,
  now: number,
  tool: AnyTool | undefined,
  options: OperatorOptions,
): Promise<OperatorActionResult> {
  if (!tool || !options.resendAllowed) {
    throw new OperatorActionError("NOT_ALLOWED", `resend_same_key is refused: ${options.resendRefusal}`, {
      field: "action",
      detail: { tool: record.tool, kind: tool?.kind ?? null },
    });
  }
  const deadline =
    input.deadline ??
    Deadline.after(Math.max(tool.timeoutMs, rt.minCallBudgetMs) + rt.reserveMs + RESEND_SLACK_MS, rt.clock);
  let timeoutMs: number;
  try {
    timeoutMs = deadline.timeoutFor(tool.timeoutMs, rt.reserveMs, rt.minCallBudgetMs);
  } catch (error) {
    if (!isDeadlineExceededError(error)) throw error;
    throw new OperatorActionError("INVALID_INPUT", `deadline: ${error.message}`, { field: "deadline" });
  }
  const patch: IntentPatch = {
    status: "PENDING",
    attempt: record.attempt + 1,
    ...leasedUntil(deadline.epochMs),
    error: null,
    resolution: null,
    needsHuman: false,
    finishedAtEpochMs: null,
    settlesAtEpochMs: await settlesAtForSend(rt, tool, deadline),
  };

  const applied = await committedOrThrow(rt, store, input, () =>
    applyAudited(rt, store, record, input, now, patch, { toStatus: "PENDING", attempt: record.attempt + 1 }),
  );
  if (applied.kind === "answered") return applied.result;

  const sent = await sendOnce(rt, tool, applied.record, deadline, timeoutMs, {
    resolutionOnSuccess: "human_resent",
    spanName: `resend ${tool.name}`,
  });
  let after: IntentRecord;
  let envelope: Envelope;
  switch (sent.kind) {
    case "settled":
      after = sent.record;
      envelope = sent.envelope;
      break;
    case "unknown":
      after = sent.record;
      envelope = envelopeFor(
        rt,
        after,
        false,
        "an operator resent it once with the same key; the outcome is unknown again; reconciliation scheduled",
      );
      break;
    case "lost":
      after = sent.record ?? applied.record;
      envelope = envelopeFor(rt, after, true);
      break;
  }
  return {
    record: after,
    envelope,
    replayed: false,
    audit: applied.audit,
    keyExpired: options.keyExpired,
    warnings: options.resendWarnings,
  };
}

/**
 * The audited change of a resend, also when its COMMIT's answer was lost (issue 21 §7): the audit
 * log must record only what happened, and its row says "resent". When the change throws anything but
 * a refusal, the operatorActionId's audit row tells whether it committed: not there → nothing
 * happened, the error is thrown; there, with the record still as that change left it (PENDING, this
 * attempt, its lease running) → the change is applied, and the resend is sent as the row says.
 * Otherwise (the row is there but the lease has passed, or the log cannot be read) the error is
 * thrown and the record is a stale PENDING that the sweeper reconciles (a same-key resend at most).
 * @throws the change's own error when it did not commit, or cannot be shown to have.
 */
async function committedOrThrow(
  rt: Runtime,
  store: OperatorStore,
  input: OperatorActionInput,
  change: () => Promise<AuditedChange>,
): Promise<AuditedChange> {
  try {
    return await change();
  } catch (error) {
    if (isOperatorActionError(error)) throw error;
    const audit = await store.findAudit(input.operatorActionId).catch(() => null);
    if (!audit || audit.key !== input.key || audit.action !== "resend_same_key") throw error;
    const current = await rt.store.get(input.key).catch(() => null);
    // The lease is judged by the store's clock (rule 9), as the sweeper that would take it over judges it.
    const untouched =
      current !== null &&
      current.version === audit.after.version &&
      current.status === "PENDING" &&
      current.leaseUntilEpochMs > (await storeNow(rt).catch(() => Number.POSITIVE_INFINITY));
    if (!untouched) throw error;
    return { kind: "applied", record: current, audit };
  }
}
