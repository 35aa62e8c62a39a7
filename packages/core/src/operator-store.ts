/**
 * The operator side of the intent log: the audit of who did what to which record, and the port that
 * applies an operator's change and its audit row in one transaction (`packages/db`:
 * `PrismaOperatorStore`; `MemoryIntentStore` for tests).
 */
import type { IntentEvent, IntentPatch, IntentRecord } from "./intent-store.ts";
import type { OperatorAction } from "./statuses.ts";

/** One row of the append-only operator audit: who did what to which record, before → after. */
export interface AuditEntry {
  /** Sequence number (increasing per store). */
  id: number;
  /** The tenant of the record acted on (the store's). */
  tenant: string;
  /** The client-chosen id of the action; unique, so a repeat is answered from this row. */
  operatorActionId: string;
  /** The API key (id) that acted. */
  actorKeyId: string;
  /** That key's name at the time. */
  actorName: string;
  /** Epoch ms. */
  atEpochMs: number;
  action: OperatorAction;
  /** The operator's reason, as given. */
  note: string;
  key: string;
  tool: string;
  /** The record before the change. */
  before: IntentRecord;
  /** The record as the change left it (for `resend_same_key`: PENDING, before the send). */
  after: IntentRecord;
}

/** One operator change: a compare-and-set of the record, its events, and its audit row, all in one transaction. */
export interface OperatorChange {
  key: string;
  /** The record version the operator saw; the change applies only to that version. */
  expectedVersion: number;
  patch: IntentPatch;
  /** Timeline events (a `human_action` event at least). */
  events: IntentEvent[];
  /** Epoch ms: the record's `updatedAt` and the audit row's time. */
  nowEpochMs: number;
  /** The audit row's own fields (the rest comes from the record before and after). */
  audit: Pick<AuditEntry, "operatorActionId" | "actorKeyId" | "actorName" | "action" | "note">;
}

/** Result of {@link OperatorStore.applyOperatorAction}. */
export type OperatorApplyResult =
  /** The change and its audit row were committed together. */
  | { kind: "applied"; record: IntentRecord; audit: AuditEntry }
  /** The `operatorActionId` was used already (possibly by a racing identical request): nothing was changed. */
  | { kind: "duplicate"; audit: AuditEntry }
  /** The record's version is not `expectedVersion` (or the record is gone): nothing was changed. */
  | { kind: "stale"; current: IntentRecord | null };

/**
 * The operator side of the intent log (optional; `IntentStore` stays as it is). `packages/db`
 * implements it on PostgreSQL (`PrismaOperatorStore`); `MemoryIntentStore` implements it for tests.
 */
export interface OperatorStore {
  /**
   * Atomically: compare-and-set of the record (`key`, `version = expectedVersion`; version + 1,
   * `updatedAt = now`), the events, and the audit row. The unique `operatorActionId` decides between
   * identical racing requests: the loser gets `duplicate` with the winner's row and nothing changes.
   * A version mismatch whose cause is a committed action with the same `operatorActionId` is also
   * answered `duplicate`.
   */
  applyOperatorAction(change: OperatorChange): Promise<OperatorApplyResult>;
  /** The audit row of an operator action id, or null. */
  findAudit(operatorActionId: string): Promise<AuditEntry | null>;
  /** The newest audit row of a record, or null when no operator has acted on it. */
  latestAudit(key: string): Promise<AuditEntry | null>;
}

/** True when `store` also implements {@link OperatorStore}. */
export function isOperatorStore(store: unknown): store is OperatorStore {
  const s = store as Partial<OperatorStore> | null;
  return (
    typeof s?.applyOperatorAction === "function" &&
    typeof s.findAudit === "function" &&
    typeof s.latestAudit === "function"
  );
}
