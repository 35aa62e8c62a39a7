import type { IntentPatch, IntentRecord } from "../intent-store.ts";
import type { OperatorStore } from "../operator-store.ts";
import { envelopeFor } from "../record-envelope.ts";
import type { Runtime } from "../runtime.ts";
import type { OperatorAction } from "../statuses.ts";
import { applyAudited } from "./audit.ts";
import type { OperatorActionInput, OperatorActionResult } from "./input.ts";
import type { OperatorOptions } from "./options.ts";

/** The two actions by which an operator settles a record: the effect happened, or it did not. */
export type ConfirmAction = Extract<OperatorAction, "confirm_effect" | "confirm_no_effect">;

/**
 * `confirm_effect` → SUCCEEDED, resolution `human_confirmed_effect`; `confirm_no_effect` →
 * FAILED_NO_EFFECT, resolution `human_confirmed_no_effect` (the agent may try again, rule 3). The
 * record must be waiting for a human (the caller checked); the change is audited by {@link applyAudited}.
 * @param action - `input.action`, narrowed to a confirmation.
 * @param now - epoch ms.
 * @param options - the record's {@link OperatorOptions} at `now` (its `keyExpired` is reported).
 * @throws what {@link applyAudited} throws. Nothing changed.
 */
export async function confirmAsOperator(
  rt: Runtime,
  store: OperatorStore,
  record: IntentRecord,
  input: OperatorActionInput,
  action: ConfirmAction,
  now: number,
  options: OperatorOptions,
): Promise<OperatorActionResult> {
  const patch = confirmPatch(action, now);
  const applied = await applyAudited(rt, store, record, input, now, patch, { toStatus: patch.status });
  if (applied.kind === "answered") return applied.result;
  return {
    record: applied.record,
    envelope: envelopeFor(rt, applied.record, false, actionTaken(action)),
    replayed: false,
    audit: applied.audit,
    keyExpired: options.keyExpired,
    warnings: [],
  };
}

/**
 * `confirm_effect` on a SUCCEEDED record in the human queue (an aborted run's effect that nothing
 * declared can undo, corrected by hand): clears the queue flag and the error that queued it, sets
 * resolution `human_confirmed_effect`, keeps the status and the finish time. Audited like the others.
 * @param now - epoch ms.
 * @throws what {@link applyAudited} throws. Nothing changed.
 */
export async function acknowledgeAsOperator(
  rt: Runtime,
  store: OperatorStore,
  record: IntentRecord,
  input: OperatorActionInput,
  now: number,
): Promise<OperatorActionResult> {
  const patch = { resolution: "human_confirmed_effect", needsHuman: false, error: null } as const;
  const applied = await applyAudited(rt, store, record, input, now, patch, { toStatus: "SUCCEEDED" });
  if (applied.kind === "answered") return applied.result;
  return {
    record: applied.record,
    envelope: envelopeFor(rt, applied.record, false, "an operator acknowledged the effect (corrected by hand)"),
    replayed: false,
    audit: applied.audit,
    keyExpired: false,
    warnings: [],
  };
}

function confirmPatch(action: ConfirmAction, now: number): IntentPatch & Pick<IntentRecord, "status"> {
  switch (action) {
    case "confirm_effect":
      return {
        status: "SUCCEEDED",
        resolution: "human_confirmed_effect",
        needsHuman: false,
        error: null,
        finishedAtEpochMs: now,
      };
    case "confirm_no_effect":
      return {
        status: "FAILED_NO_EFFECT",
        resolution: "human_confirmed_no_effect",
        needsHuman: false,
        error: {
          code: "OPERATOR_CONFIRMED_NO_EFFECT",
          message: "an operator confirmed that the effect did not happen",
        },
        finishedAtEpochMs: now,
      };
  }
}

function actionTaken(action: ConfirmAction): string {
  switch (action) {
    case "confirm_effect":
      return "an operator confirmed the effect";
    case "confirm_no_effect":
      return "an operator confirmed that nothing happened";
  }
}
