import { Deadline } from "../deadline.ts";
import type { IntentRecord } from "../intent-store.ts";
import type { OperatorStore } from "../operator-store.ts";
import { envelopeFor } from "../record-envelope.ts";
import type { Runtime } from "../runtime.ts";
import { type SagaApi, undoStep } from "../saga.ts";
import { applyAudited } from "./audit.ts";
import { OperatorActionError } from "./errors.ts";
import type { OperatorActionInput, OperatorActionResult } from "./input.ts";

/** Default budget of a compensation an operator triggers, ms. */
const OPERATOR_COMPENSATION_BUDGET_MS = 30_000;

/**
 * `compensate`: an operator reverses a confirmed effect. The action is audited (record version
 * checked, `human_action` event, audit row) before the compensating call runs through the executor
 * like any call (its own intent record, key derived from the original key, probes, three outcomes).
 * @throws OperatorActionError `NOT_ALLOWED` (no saga, an unconfirmed or absent effect, no declared
 *   compensation or corrective), or what {@link applyAudited} throws. Nothing changed.
 */
export async function compensateAsOperator(
  rt: Runtime,
  store: OperatorStore,
  saga: SagaApi | undefined,
  record: IntentRecord,
  input: OperatorActionInput,
): Promise<OperatorActionResult> {
  const tool = rt.tools.get(record.tool);
  const spec = tool?.irreversible ? tool.corrective : tool?.compensation;
  const refuse = (why: string): never => {
    throw new OperatorActionError("NOT_ALLOWED", `compensate is refused: ${why}; nothing was changed`, {
      field: "action",
      detail: { status: record.status, tool: record.tool, compensation: spec?.tool ?? null },
    });
  };
  if (!saga) refuse("this executor cannot run compensations here");
  if (record.status === "UNKNOWN" || record.status === "PENDING") {
    refuse(`the effect is ${record.status}, and an unconfirmed effect is never compensated (rule 6): settle it first`);
  }
  if (record.status === "FAILED_NO_EFFECT") refuse("the effect did not happen; there is nothing to undo");
  if (!spec) refuse(`tool "${record.tool}" declares no ${tool?.irreversible ? "corrective action" : "compensation"}`);
  const now = rt.clock.nowEpochMs();
  const applied = await applyAudited(
    rt,
    store,
    record,
    input,
    now,
    { needsHuman: false },
    { compensation: spec!.tool },
  );
  if (applied.kind === "answered") return applied.result;
  const deadline = input.deadline ?? Deadline.after(OPERATOR_COMPENSATION_BUDGET_MS, rt.clock);
  const report = await undoStep(rt, saga!, applied.record, deadline);
  const after = (await rt.store.get(record.key)) ?? applied.record;
  return {
    record: after,
    envelope: report.compensation ?? envelopeFor(rt, after, false, report.message),
    replayed: false,
    audit: applied.audit,
    keyExpired: false,
    warnings: report.outcome === "compensated" || report.outcome === "corrected" ? [] : [report.message],
  };
}
