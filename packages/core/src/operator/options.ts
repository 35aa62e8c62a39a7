import type { IntentRecord } from "../intent-store.ts";
import type { AnyTool } from "../tool.ts";
import { toolKindPolicy } from "../tool-kind-policy.ts";

/**
 * Whether a person may settle the record now. Any UNKNOWN (in the human queue or not — an operator
 * may settle what reconciliation is still working on; the compare-and-set keeps the two from both
 * winning), and a PENDING past its lease (the owner's call is over). SUCCEEDED, FAILED_NO_EFFECT and
 * a PENDING within its lease (a call in flight, rule 2) are not.
 * @param nowEpochMs - epoch ms.
 */
export function waitingForHuman(record: IntentRecord, nowEpochMs: number): boolean {
  return record.status === "UNKNOWN" || (record.status === "PENDING" && record.leaseUntilEpochMs <= nowEpochMs);
}

/** What an operator may do with a record now, for queues and for checks. */
export interface OperatorOptions {
  /** {@link waitingForHuman}. */
  waiting: boolean;
  /** Whether `resend_same_key` is allowed (waiting, tool in the catalog, not `read_only`). */
  resendAllowed: boolean;
  /** Why `resend_same_key` is refused, or null. */
  resendRefusal: string | null;
  /** Older than the tool's key retention. */
  keyExpired: boolean;
  /** Cautions that go with a resend. */
  resendWarnings: string[];
}

/**
 * What an operator may do with `record` (whose tool is `tool`, undefined when not in the catalog).
 * @param nowEpochMs - epoch ms.
 */
export function operatorOptions(record: IntentRecord, tool: AnyTool | undefined, nowEpochMs: number): OperatorOptions {
  const waiting = waitingForHuman(record, nowEpochMs);
  const keyExpired = tool ? nowEpochMs - record.createdAtEpochMs > tool.keyRetentionMs : false;
  let resendRefusal: string | null = null;
  if (!tool) resendRefusal = `tool "${record.tool}" is not in the catalog, so nothing can be sent`;
  else if (!toolKindPolicy(tool.kind).hasEffect)
    resendRefusal = `tool "${tool.name}" is read_only: there is no effect to resend`;
  else if (!waiting) resendRefusal = `the record is not waiting for a human (${stateName(record, nowEpochMs)})`;
  const resendWarnings: string[] = [];
  if (tool && toolKindPolicy(tool.kind).remoteIgnoresKey) {
    resendWarnings.push(
      `tool "${tool.name}" is unsafe: the remote does not deduplicate by key, so a resend makes a second effect if the first one happened`,
    );
  }
  if (tool && keyExpired) {
    resendWarnings.push(
      `the record is older than the tool's key retention (${tool.keyRetentionMs} ms): the remote may no longer recognise the key, so a resend can make a second effect`,
    );
  }
  return { waiting, resendAllowed: resendRefusal === null, resendRefusal, keyExpired, resendWarnings };
}

/** The record's state in words, e.g. `SUCCEEDED (found)` or `PENDING (in flight until 2026-…)`. */
export function stateName(record: IntentRecord, nowEpochMs: number): string {
  if (record.status === "PENDING") {
    return record.leaseUntilEpochMs > nowEpochMs
      ? `PENDING (a call is in flight until ${new Date(record.leaseUntilEpochMs).toISOString()})`
      : "PENDING (past its lease)";
  }
  const parts = [record.resolution, record.needsHuman ? "needs_human" : null].filter(Boolean).join(", ");
  return parts ? `${record.status} (${parts})` : record.status;
}
