import { storeNow } from "../lease.ts";
import type { OperatorStore } from "../operator-store.ts";
import type { Runtime } from "../runtime.ts";
import type { SagaApi } from "../saga.ts";
import { replay } from "./audit.ts";
import { compensateAsOperator } from "./compensate.ts";
import { acknowledgeAsOperator, confirmAsOperator } from "./confirm.ts";
import { isOperatorActionError, OperatorActionError } from "./errors.ts";
import { type OperatorActionInput, type OperatorActionResult, validateOperatorActionInput } from "./input.ts";
import { staleError } from "./latest-change.ts";
import { operatorOptions, stateName, waitingForHuman } from "./options.ts";
import { resendAsOperator } from "./resend.ts";

/**
 * Applies an operator action to a record waiting for a human (DESIGN.md: `needs_human --operator-->
 * SUCCEEDED | FAILED_NO_EFFECT | resend`), audited in the same transaction as the change:
 * - `confirm_effect` → SUCCEEDED, resolution `human_confirmed_effect`;
 * - `confirm_no_effect` → FAILED_NO_EFFECT, resolution `human_confirmed_no_effect` (the agent may try
 *   again, rule 3);
 * - `resend_same_key` → compare-and-set to PENDING (attempt + 1, a fresh lease), then one send of the
 *   persisted original arguments with the same key; SUCCEEDED gets resolution `human_resent`; an
 *   ambiguous answer leaves it UNKNOWN (out of the human queue: reconciliation takes it from there,
 *   and sends it back to the queue if it cannot decide). Refused for `read_only` tools; allowed for
 *   `unsafe` ones (the human decides) with warnings, and `keyExpired` when the record is older than the
 *   tool's key retention;
 * - on a SUCCEEDED record in the queue (an abort queues an effect nothing declared can undo, to be
 *   corrected by hand), only `confirm_effect`: it acknowledges the correction, clearing the queue flag
 *   (resolution `human_confirmed_effect`, status and finish time kept);
 * - `compensate` → runs the declared compensation (or an irreversible tool's corrective) of a
 *   confirmed (SUCCEEDED) effect as its own tool call; refused for anything not confirmed (rule 6).
 * Each action appends a `human_action` event `{ action, actor, actorKeyId, note, operatorActionId }`.
 * A repeated `operatorActionId` is answered from its audit row (`replayed: true`), never re-done;
 * for a resend, the answer waits (up to the resend's lease) for the first request's outcome.
 * @throws OperatorActionError `INVALID_INPUT` (field named), `NOT_FOUND`, `STALE_VERSION` (with
 *   `detail.winner`), `NOT_WAITING` (state named), `NOT_ALLOWED`, `ACTION_ID_REUSED`. Nothing changed.
 * @throws whatever the stores throw when the database fails.
 */
export async function resolveIntent(
  rt: Runtime,
  store: OperatorStore,
  input: OperatorActionInput,
  saga?: SagaApi,
): Promise<OperatorActionResult> {
  validateOperatorActionInput(input);
  const prior = await store.findAudit(input.operatorActionId);
  if (prior) return replay(rt, prior, input);
  try {
    return await act(rt, store, input, saga);
  } catch (error) {
    // An identical request (same operatorActionId: a double click) may have committed between the
    // look-up above and this one's checks: then the record changed because of it, and this request
    // is its repeat, answered from its audit row — not a conflict.
    if (isOperatorActionError(error) && (error.code === "STALE_VERSION" || error.code === "NOT_WAITING")) {
      const won = await store.findAudit(input.operatorActionId);
      if (won) return replay(rt, won, input);
    }
    throw error;
  }
}

async function act(
  rt: Runtime,
  store: OperatorStore,
  input: OperatorActionInput,
  saga: SagaApi | undefined,
): Promise<OperatorActionResult> {
  const record = await rt.store.get(input.key);
  if (!record) throw new OperatorActionError("NOT_FOUND", `no intent record with key ${input.key}`, { field: "key" });
  if (record.version !== input.expectedVersion) throw await staleError(rt, store, record, input.expectedVersion);
  // Judged by the store's clock, never a replica's (rule 9): a replica whose clock runs ahead must not
  // take a PENDING record whose call is still in flight for one whose lease is over.
  const now = await storeNow(rt);
  if (input.action === "compensate") return compensateAsOperator(rt, store, saga, record, input);
  if (record.status === "SUCCEEDED" && record.needsHuman) {
    // Queued by an abort: a confirmed effect that nothing declared can undo waits for a person to
    // correct it by hand. The effect stands, so the one action is to acknowledge it (dealt with).
    if (input.action === "confirm_effect") return acknowledgeAsOperator(rt, store, record, input, now);
    throw new OperatorActionError(
      "NOT_WAITING",
      `record ${record.key} is SUCCEEDED: its effect is confirmed and waits to be corrected by hand, so it cannot be marked as not having happened or be resent; confirm_effect acknowledges it once dealt with. Nothing was changed`,
      {
        field: "action",
        detail: { status: record.status, resolution: record.resolution, needsHuman: true, version: record.version },
      },
    );
  }
  if (!waitingForHuman(record, now)) {
    throw new OperatorActionError(
      "NOT_WAITING",
      `record ${record.key} is not waiting for a human: it is ${stateName(record, now)}; nothing was changed`,
      {
        field: "key",
        detail: {
          status: record.status,
          resolution: record.resolution,
          needsHuman: record.needsHuman,
          version: record.version,
        },
      },
    );
  }
  const tool = rt.tools.get(record.tool);
  const options = operatorOptions(record, tool, now);

  switch (input.action) {
    case "confirm_effect":
    case "confirm_no_effect":
      return confirmAsOperator(rt, store, record, input, input.action, now, options);
    case "resend_same_key":
      return resendAsOperator(rt, store, record, input, now, tool, options);
  }
}
