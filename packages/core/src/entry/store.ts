/**
 * `@tristate/core/store`: for store implementers. The intent log port ({@link IntentStore}: claim,
 * compare-and-set update, events, the sweeper's `claimStale`, plans, identity look-ups) and the
 * operator audit port ({@link OperatorStore}), the records and patches they hold, the closed unions
 * their fields take, and {@link MemoryIntentStore}, the reference implementation.
 *
 * A new backend is correct when it passes the contract suite, `describeIntentStoreContract` from
 * the dev-only `@tristate/testing` (and the executor scenarios, `describeExecutorScenarios`), as
 * `@tristate/db`'s PostgreSQL store does.
 *
 * @example
 * ```ts
 * import { type IntentStore, MemoryIntentStore, systemClock } from "@tristate/core/store";
 * import { describeIntentStoreContract } from "@tristate/testing";
 *
 * describeIntentStoreContract("MemoryIntentStore (the reference store)", async () => {
 *   // The store's clock judges leases (rule 9): PostgreSQL's now(), here the system clock.
 *   const store: IntentStore = new MemoryIntentStore({ clock: systemClock });
 *   return { store, cleanup: async () => {} };
 * });
 * ```
 * (`examples/store.test.ts`, run by the package's tests.)
 * @module
 */

export {
  type AuditEntry,
  type ClaimResult,
  type Clock,
  COMPENSATION_KINDS,
  type CompensationKind,
  checkTenant,
  DEFAULT_TENANT,
  INTENT_EVENT_TYPES,
  INTENT_STATUSES,
  type IntentError,
  type IntentEvent,
  type IntentEventType,
  type IntentPatch,
  type IntentRecord,
  type IntentStatus,
  type IntentStore,
  isOperatorStore,
  isSettled,
  isUnsettled,
  isWriteRefusedError,
  type JsonObject,
  type JsonValue,
  type LeasedRecord,
  MemoryIntentStore,
  type NewIntentRecord,
  OPERATOR_ACTIONS,
  type OperatorAction,
  type OperatorApplyResult,
  type OperatorChange,
  type OperatorStore,
  type PlanStep,
  parseRecordedCompensation,
  type RanCompensation,
  REASON_CODES,
  RESOLUTIONS,
  type ReasonCode,
  type RecordedCompensation,
  type RegisteredCompensation,
  type Resolution,
  type RunAbort,
  RunAbortedError,
  type RunAbortInput,
  type RunAbortVia,
  recordedCompensationSchema,
  type StoredIntentEvent,
  storableJson,
  storableValue,
  systemClock,
  TENANT_PATTERN,
  TENANT_RULE_TEXT,
  TOOL_KINDS,
  type ToolKind,
  toJson,
  type WriteOptions,
  WriteRefusedError,
  wireKey,
} from "../index.ts";
