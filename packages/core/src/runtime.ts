/**
 * The executor's shared state (`Runtime`): what every part of one executor reads — its store, tenant,
 * tools, clock, tracer and settings. Types only; the helpers that take a `Runtime` live by concept in
 * `tracing.ts`, `timeout-signal.ts`, `record-events.ts` and `record-envelope.ts`.
 */
import type { Tracer } from "@opentelemetry/api";
import type { Clock } from "./clock.ts";
import type { ConfirmationVerifier } from "./confirmations.ts";
import type { IntentRecord, IntentStore } from "./intent-store.ts";
import type { AnyTool } from "./tool.ts";

/** Reconciliation probe settings. */
export interface ProbeOptions {
  /** Probe rounds before concluding "absent". @default 3 */
  attempts?: number;
  /** Spacing unit between rounds, ms: round i waits `min(i × spacingMs, remaining / 4)`. @default 1000 */
  spacingMs?: number;
  /** Timeout of one probe, ms (capped by the deadline). @default 5000 (source design: `timeout_for(5.0)`) */
  timeoutMs?: number;
}

/** Internal, shared by the executor's parts. Not exported from the package. */
export interface Runtime {
  store: IntentStore;
  /** The tenant of every record this executor writes (its store's): part of every key it derives. */
  tenant: string;
  /** Every tool it runs: the catalog and the internal tools. */
  tools: ReadonlyMap<string, AnyTool>;
  /** Names of the internal tools (`ExecutorOptions.internalTools`): refused to `call`, run by `callInternal`. */
  internalTools: ReadonlySet<string>;
  /** `ExecutorOptions.humanQueueNotified`: whether a record entering the human queue notifies an operator. */
  humanQueueNotified: (() => boolean) | undefined;
  clock: Clock;
  tracer: Tracer;
  probe: Required<ProbeOptions>;
  /** Sweeps without evidence before a record goes to the human queue. */
  maxReconcileSweeps: number;
  /** Write outcomes durably even where a lost outcome would only cost a probe. */
  durableOutcomes: boolean;
  /** Answer SUCCEEDED before its (non-durable) outcome write lands. */
  backgroundOutcomes: boolean;
  /** Told when a background outcome write failed for good (the record stays PENDING for the sweeper). */
  onBackgroundWriteError?: (error: unknown, key: string) => void;
  /** Outcome writes still in the background, by key (settle, never reject). */
  pendingOutcomes: Map<string, Promise<unknown>>;
  /** Undos of effects that settled after their run was aborted (rule 13), running in the background, by key (never reject). */
  pendingUndos: Map<string, Promise<unknown>>;
  /**
   * Late answers waiting, in the background, for another attempt of their record (in flight when they
   * arrived) to settle before they are weighed against it (rule 16), by key (never reject).
   */
  pendingLateEvidence: Map<string, Promise<unknown>>;
  /**
   * Calls answered at their answer time (deadline minus reserve) while their own work went on
   * (`answerByDeadline`, issue 21 §1), by an id of each (never reject).
   */
  lateCalls: Map<symbol, Promise<unknown>>;
  /**
   * Rule 13 for a record just made SUCCEEDED outside the executor's store (an operator's audited
   * confirmation): undoes it when its run was aborted (`undoIfRunAborted`). Resolves to the run's abort, or null.
   */
  undoIfAborted: (record: IntentRecord) => Promise<unknown>;
  /** Time kept back from every call's budget so the agent can still report, ms. */
  reserveMs: number;
  /** Least budget a call may start with after the reserve, ms. */
  minCallBudgetMs: number;
  /** First delay before the sweeper re-probes a record in the human queue, ms (doubles each time). */
  humanRecheckMs: number;
  /**
   * The last reading of the store's clock (`storeNow`): the store's epoch ms and this replica's
   * monotonic ms when it was read, so `storeClockNow` can carry it forward without a round trip.
   */
  storeClock?: { storeEpochMs: number; monotonicMs: number };
  /** Verifies confirmation tokens for tools with a confirmation policy; absent: every such call is refused. */
  confirmations: ConfirmationVerifier | undefined;
}
