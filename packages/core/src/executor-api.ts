/**
 * The executor's public shapes: {@link ExecutorOptions} (what `createExecutor` takes) and
 * {@link Executor} (what it returns), apart from the implementation so modules that only need the
 * types (the sweeper, adapters) do not import it.
 */
import type { Tracer } from "@opentelemetry/api";
import type { CallInput, ConfirmationRequest } from "./call-input.ts";
import type { Clock } from "./clock.ts";
import type { ConfirmationVerifier } from "./confirmations.ts";
import type { Deadline } from "./deadline.ts";
import type { Envelope } from "./envelope.ts";
import type { IntentRecord, IntentStore, LeasedRecord, PlanStep } from "./intent-store.ts";
import type { OperatorActionInput, OperatorActionResult } from "./operator/index.ts";
import type { OperatorStore } from "./operator-store.ts";
import type { ProbeRerunReport } from "./probe-rerun.ts";
import type { RunAbortInput } from "./run-abort.ts";
import type { ProbeOptions } from "./runtime.ts";
import type { AbortReport, StepReport } from "./saga.ts";
import type { AnyTool } from "./tool.ts";

/** Options of {@link createExecutor}. */
export interface ExecutorOptions {
  /** The durable intent log (`PrismaIntentStore` from `@tristate/db`; `MemoryIntentStore` in unit tests). */
  store: IntentStore;
  /** The tool catalog (from `defineTool`). Names must be unique. */
  tools: readonly AnyTool[];
  /**
   * Tools the embedding service runs for itself (Tristate's own notifications, issue 23 §3): run by
   * {@link Executor.callInternal} only — `call` refuses them as not in the catalog, and `tools` does
   * not list them — and otherwise like any tool: recorded, reconciled by the sweeper, resolved by
   * operators. Names must not repeat a catalog tool's. @default none
   */
  internalTools?: readonly AnyTool[];
  /**
   * Whether an operator is notified of a record that enters the human queue (the service has a
   * notification channel for it), read when an envelope says so: true → `action_taken` says an
   * operator has been notified; false or absent → that the record waits in the human queue. Called
   * on the call's path: it must answer at once (a cached value) and never throw.
   */
  humanQueueNotified?: () => boolean;
  /** Reconciliation probes: `attempts` (default 3), `spacingMs` (default 1000), `timeoutMs` (default 5000). */
  probe?: ProbeOptions;
  /** Time source; inject a fake one in tests. Default: the system clock. */
  clock?: Clock;
  /** OpenTelemetry tracer (`@opentelemetry/api`). Default: the global tracer provider's (a no-op without an SDK). */
  tracer?: Tracer;
  /** Sweeper passes without evidence before a record goes to the human queue. @default 5 */
  maxReconcileSweeps?: number;
  /**
   * Write every outcome durably (wait for the WAL flush). By default an outcome is written without
   * waiting for the flush when losing it costs the sweeper no more than a resend the remote
   * deduplicates (an `idempotent_by_key` tool resent on absence, or with no probe); an `unsafe` tool's
   * outcomes, and every FAILED_NO_EFFECT, are durable.
   * @default false
   */
  durableOutcomes?: boolean;
  /**
   * Answer a SUCCEEDED call without waiting for its outcome write, where that write is not durable
   * anyway (see `durableOutcomes`): the claim is then the only write the call waits for. The write
   * goes on in the background; a later call of the same key in this process waits for it first.
   * If it is lost (the database fails, the process dies), the record stays PENDING and the sweeper
   * settles it after its lease by a probe (`found`) or a same-key resend the remote deduplicates,
   * so the log ends SUCCEEDED as answered. FAILED_NO_EFFECT and UNKNOWN are always awaited.
   * @default false
   */
  backgroundOutcomes?: boolean;
  /**
   * Called when a background outcome write (`backgroundOutcomes`) failed for good: it was tried again
   * for up to ≈ 1.5 s while the record's lease lasted. The record stays PENDING and the sweeper
   * settles it after the lease (a probe, or a same-key resend the remote deduplicates); log it.
   */
  onBackgroundWriteError?: (error: unknown, key: string) => void;
  /** Time kept back from each call's budget so the agent can still report what happened, ms. @default 2000 */
  reserveMs?: number;
  /** Least budget (after the reserve) a call may start with, ms; below it the call is refused unsent. @default 1000 */
  minCallBudgetMs?: number;
  /**
   * Verifies confirmation tokens for tools with a `confirmation` policy (see
   * `createConfirmationTokens`). Without it, every call above such a policy's threshold is refused.
   */
  confirmations?: ConfirmationVerifier;
  /**
   * First delay before the sweeper re-probes a record waiting in the human queue whose tool has a
   * probe (an effect may still land); it doubles on each re-check, up to 256×. ms. @default 300000
   */
  humanRecheckMs?: number;
}

/** The executor: one entry point per tool call. */
export interface Executor {
  /**
   * Runs one tool call with the source design's `call_tool` + `reconcile` and DESIGN.md rules 1–8.
   * Never throws for model mistakes (unknown tool, bad arguments, no budget): those come back as a
   * FAILED_NO_EFFECT envelope naming the field and the rule.
   * @throws TypeError for programmer errors (missing runId/stepId, `deadline` not a Deadline).
   * @throws whatever the store throws when the intent log is unreachable (nothing is sent then).
   */
  call(input: CallInput): Promise<Envelope>;
  /**
   * {@link Executor.call} for an internal tool (`internalTools`) as well as a catalog tool: the
   * embedding service's own effects, under the same rules. Never reachable from an agent's input.
   */
  callInternal(input: CallInput): Promise<Envelope>;
  /**
   * Reconciles one UNKNOWN record now (the sweeper and operators use it).
   * @param known - the record as just read or leased (the sweeper's `claimStale` row), saving a read;
   *   if it is stale, its compare-and-set fails and the record is read again.
   * @throws Error when the record or its tool does not exist.
   */
  reconcileKey(
    key: string,
    deadline: Deadline,
    trigger?: "call" | "sweeper",
    known?: IntentRecord | LeasedRecord,
  ): Promise<Envelope>;
  /**
   * An operator action on a record waiting for a human, audited through `operatorStore` (default:
   * the executor's store, when it implements {@link OperatorStore}). See `resolveIntent` in operator/resolve.ts.
   * @throws OperatorActionError when the action is refused (nothing changed).
   * @throws TypeError when no operator store is given and the executor's store is not one.
   */
  resolve(input: OperatorActionInput, operatorStore?: OperatorStore): Promise<OperatorActionResult>;
  /**
   * Runs the record's probes now, once each, without changing the record (operators' `probe.rerun`).
   * @param timeoutMs - per probe, ms; default the executor's probe timeout.
   * @throws OperatorActionError `NOT_FOUND` / `NOT_ALLOWED` (tool not in the catalog).
   */
  rerunProbes(key: string, timeoutMs?: number): Promise<ProbeRerunReport>;
  /**
   * Aborts a run (saga): reconciles its unsettled effects first, then compensates confirmed effects
   * latest step first; irreversible ones get their corrective action or go to the human queue.
   * Idempotent: a second abort replays the compensations. The abort is recorded with the run first
   * (`by`: who and why; default the embedding code, no reason): a new step of the run is then
   * refused, and a step that settles later is undone (rule 13). See `abortRun` in saga.ts.
   * @throws TypeError for a missing run id or a deadline that is not a Deadline.
   */
  abortRun(runId: string, deadline: Deadline, by?: RunAbortInput): Promise<AbortReport>;
  /**
   * The sweeper's pass of rule 13: undoes the effects of aborted runs that settled but were never
   * undone (the process that settled them died first). See `undoAbortedSteps` in abort-undo.ts.
   * @param options.limit - most records, @default 50; options.graceMs - left to their own process this long after their settle, ms, @default 30000.
   * @throws what the store throws when it cannot list them.
   */
  undoAbortedSteps(options?: { limit?: number; graceMs?: number }): Promise<StepReport[]>;
  /**
   * Compensates one confirmed effect now (an operator's `compensate`); never an unconfirmed one.
   * @throws Error when no record has this key.
   */
  compensate(key: string, deadline: Deadline): Promise<StepReport>;
  /**
   * Declares (or replaces) a run's plan: its steps in order. Irreversible steps are then refused
   * while a later fallible step is not done.
   * @throws TypeError naming the field for an invalid plan (empty ids, duplicate steps).
   */
  declarePlan(runId: string, steps: PlanStep[]): Promise<void>;
  /**
   * The idempotency key a call would get (to issue a confirmation token for it).
   * @throws TypeError for an unknown tool, or arguments that fail the tool's schema or identity.
   */
  keyFor(input: Omit<CallInput, "deadline" | "confirmationToken">): string;
  /**
   * What a confirmation token for this call confirms (to issue one: `ConfirmationTokens.issue`): its
   * tenant, run, step, tool, key and the canonical form of every argument, with the schema-parsed
   * arguments to show the person who confirms.
   * @throws InvalidArgumentsError (a TypeError) as {@link Executor.keyFor} does.
   */
  confirmationFor(input: Omit<CallInput, "deadline" | "confirmationToken">): ConfirmationRequest;
  /**
   * Resolves when every outcome write this executor had left in the background (`backgroundOutcomes`)
   * when called has settled: written, or failed and left PENDING for the sweeper — and the work of
   * every call answered at its answer time while its own work went on (a stalled intent log, issue
   * 21 §1): ended, sending nothing after its deadline. Readers in this
   * process that must show what a caller was already told (the API's reads, a graceful stop) await
   * it first. Never rejects.
   */
  outcomesWritten(): Promise<void>;
  /**
   * Resolves when every late answer this executor holds in the background — one that met another
   * attempt of its record in flight and waits for that attempt's outcome before it is weighed
   * against it (rule 16; at most the attempt's lease + 10 s) — has been weighed, or given up (its
   * `late_answer` event stays on the timeline). For tests; API reads need not wait for it. Never rejects.
   */
  lateEvidenceWeighed(): Promise<void>;
  /**
   * Resolves when every undo this executor started in the background (a step that settled after its
   * run was aborted, rule 13) has ended, and the outcome writes that may start one. For tests and a
   * graceful stop; API reads need not wait (a stop mid-undo leaves it to the sweeper's pass). Never rejects.
   */
  undosDone(): Promise<void>;
  /** The catalog by name (never an internal tool). */
  readonly tools: ReadonlyMap<string, AnyTool>;
  /** The store this executor writes to. */
  readonly store: IntentStore;
  /** The tenant of every record it writes and reads (its store's; `default` when the store names none). */
  readonly tenant: string;
  /** The executor's clock. */
  readonly clock: Clock;
}
