/**
 * The executor API's shapes as this package publishes them: standalone declarations, so the
 * package's types need nothing of the server (the executor is not published). They are checked
 * against the executor's router at compile time (`test/router-contract.ts`): an output the router
 * can return must fit these types and an input these types allow must fit the router's, so a change
 * in apps/executor fails this package's type check instead of drifting silently.
 * Source of each vocabulary: `@tristate/core`'s `statuses.ts` (DESIGN.md's vocabulary).
 */

/** A JSON value (what `JSON.parse` can return). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** One of the three outcomes of a side-effecting call (an envelope never says `PENDING`). */
export type Outcome = "SUCCEEDED" | "FAILED_NO_EFFECT" | "UNKNOWN";

/** Status of an intent record: `PENDING` before the outcome is known, then one of the three outcomes. */
export type IntentStatus = "PENDING" | Outcome;

/** How an UNKNOWN ended; `needs_human` while a person must still decide. */
export type Resolution =
  | "found"
  | "absent_resent"
  | "human_confirmed_effect"
  | "human_confirmed_no_effect"
  | "human_resent"
  | "needs_human";

/** Tool kinds: `read_only` (no effect), `idempotent_by_key` (the remote dedupes by key), `unsafe`. */
export type ToolKind = "read_only" | "idempotent_by_key" | "unsafe";

/** Machine-readable reason of a failure or an UNKNOWN (`error.code`). */
export type ReasonCode =
  | "NOT_SENT"
  | "REJECTED"
  | "DEADLINE_EXCEEDED"
  | "INVALID_ARGUMENTS"
  | "TOOL_ERROR_NOT_SENT"
  | "RETRY_AFTER"
  | "UNKNOWN_TOOL"
  | "IDEMPOTENCY_CONFLICT"
  | "CONFIRMATION_REQUIRED"
  | "IRREVERSIBLE_BEFORE_FALLIBLE"
  | "RUN_ABORTED_BEFORE_SEND"
  | "READ_TIMEOUT"
  | "RESET_AFTER_WRITE"
  | "GATEWAY_5XX"
  | "IN_FLIGHT"
  | "AMBIGUOUS"
  | "LEASE_EXPIRED"
  | "NO_PROBE"
  | "PROBE_FAILED"
  | "PROBES_ABSENT_NO_DEDUPE"
  | "KEY_RETENTION_EXPIRED"
  | "ABSENCE_NOT_CONCLUSIVE"
  | "RESEND_REFUSED"
  | "AMBIGUOUS_IDENTITY_MATCH"
  | "PARTIAL_EFFECT"
  | "REPEATED_WRITE"
  | "FOUND_STATE_UNKNOWN"
  | "OUTCOME_NOT_STORABLE"
  | "INTENT_LOG_TIMEOUT"
  | "OPERATOR_CONFIRMED_NO_EFFECT"
  | "COMPENSATION_FAILED"
  | "RUN_ABORTED"
  | "IRREVERSIBLE_NEEDS_CORRECTION"
  | "CONTRADICTING_EVIDENCE";

/** Why a call failed or is unknown. */
export interface IntentError {
  /** Closed reason code, e.g. `READ_TIMEOUT`, `REJECTED`. */
  code: ReasonCode;
  /** Human-readable detail; never holds argument values unless the tool marks them loggable. */
  message: string;
  /** HTTP status of the remote's answer, when there was one. */
  httpStatus?: number;
  /** How long the remote asked to wait before trying again (`Retry-After`), ms. */
  retryAfterMs?: number;
  /** Epoch ms before which nothing is sent again for this record. */
  retryNotBeforeEpochMs?: number;
  /** The argument field at fault, for `INVALID_ARGUMENTS`. */
  field?: string;
  /** The rule that field broke, for `INVALID_ARGUMENTS`. */
  rule?: string;
}

/**
 * The envelope the model reads: `status`, `retry_safe`, `effect`, `action_taken`, `message`,
 * `idempotency_key`, `attempt`, `replayed`, and optionally `result`, `resolution`, `error`,
 * `retry_after_ms`, `sent_key`, `sent_args`. Snake case because the model reads it as it is.
 */
export interface Envelope {
  /** One of the three outcomes. A call still in flight elsewhere reads `UNKNOWN`. */
  status: Outcome;
  /** Whether calling again is the model's decision to make; false whenever an effect may exist unconfirmed. */
  retry_safe: boolean;
  /** What happened in the world, in one sentence. */
  effect: string;
  /** What the executor did (sent once; replayed; probed and found it; resent with the same key; asked an operator). */
  action_taken: string;
  /** What the model should do next, addressed to it. */
  message: string;
  /** The executor-derived idempotency key (32 hex characters). */
  idempotency_key: string;
  /** Attempt number of the record (1-based). */
  attempt: number;
  /** True when the answer comes from the intent log and nothing was sent now. */
  replayed: boolean;
  /** The tool's result (SUCCEEDED), or what a probe found. */
  result?: JsonValue;
  /** How an UNKNOWN was (or is to be) resolved. */
  resolution?: Resolution;
  /** Why it failed or is unknown. */
  error?: IntentError;
  /** How long to wait before calling again, ms (the remote's `Retry-After`). */
  retry_after_ms?: number;
  /** The key this attempt sent on the wire, when it differs from `idempotency_key`. */
  sent_key?: string;
  /** The arguments the record's latest send used, on attempts after the first. */
  sent_args?: JsonValue;
}

/** Input of `calls.execute` on the wire. */
export interface ExecuteWireInput {
  /** The run (1–200 printable ASCII characters, no spaces). */
  runId: string;
  /** The step of the run; absent: the tool and its canonical identity (`auto:<tool>:<hash>`). */
  stepId?: string | undefined;
  /** The catalog's tool name. */
  tool: string;
  /** The tool's arguments. */
  args: Record<string, unknown>;
  /** The turn's deadline, epoch ms. */
  deadlineEpochMs?: number | undefined;
  /** Or: the budget from now, ms. */
  budgetMs?: number | undefined;
  /** An operator's confirmation for a tool with a confirmation policy: this run, step, tool and exactly the argument values shown. */
  confirmationToken?: string | undefined;
  /** The tenant to act in (admin keys only). */
  tenant?: string | undefined;
}

/** What an abort did with one step of the run. */
export type StepOutcome =
  | "compensated"
  | "corrected"
  | "no_effect"
  | "not_confirmed"
  | "in_flight"
  | "no_compensation"
  | "needs_correction"
  | "compensation_failed"
  | "compensation_unknown";

/** One step of an abort report. */
export interface StepReport {
  stepId: string;
  tool: string;
  /** The original call's idempotency key. */
  key: string;
  /** The original record's status after reconciliation. */
  status: IntentStatus;
  outcome: StepOutcome;
  /** The compensating (or corrective) call's envelope, when one was called. */
  compensation?: Envelope;
  /** One sentence for the model. */
  message: string;
}

/** A run's abort as recorded (DESIGN.md rule 13): the first abort's who, when and why. */
export interface RunAbort {
  runId: string;
  /** Epoch ms, by the executor's database clock. */
  abortedAtEpochMs: number;
  /** The API key's id ("" when the executor was called directly). */
  actorKeyId: string;
  actorName: string;
  via: "agent" | "operator" | "embedded";
  /** Why, as given ("" when not). */
  reason: string;
}

/** The saga's report of `runs.abort`: per step (latest first) what happened, and a summary the model can read. */
export interface AbortReport {
  runId: string;
  /** The run's abort as recorded (a repeat keeps the first one's). */
  abort: RunAbort;
  steps: StepReport[];
  /** True when nothing is left in flight and nothing waits for a person. */
  complete: boolean;
  /** Steps whose effect was reversed or corrected. */
  undone: number;
  /** Steps (or their compensations) still in flight: each is undone when it settles, without another abort. */
  inFlight: number;
  /** Steps a person must look at (in the human queue). */
  needsHuman: number;
  /** A paragraph the model can read and relay. */
  summary: string;
}

/** One declared step of a run's plan (`runs.plan`). */
export interface PlanStep {
  stepId: string;
  tool: string;
}

/** The answer of `runs.plan`: the run and how many steps were declared. */
export interface PlanAnswer {
  runId: string;
  steps: number;
}

/** One catalog entry of `tools.list`, with the JSON Schema (draft 2020-12) of its arguments. */
export interface ToolInfo {
  name: string;
  kind: ToolKind;
  description: string | null;
  /** JSON Schema (draft 2020-12) of the arguments. */
  argsJsonSchema: Record<string, unknown>;
  identityFields: string[];
  /** ms */
  timeoutMs: number;
  /** ms */
  keyRetentionMs: number;
  hasKeyProbe: boolean;
  hasIdentityProbe: boolean;
  hasCompensation: boolean;
  irreversible: boolean;
}

/**
 * The compensation registered on an intent record (`RecordedCompensation` of the core): what an
 * abort runs for the effect — `{ tool, kind, args }`, and once it ran its call's `key`, `status`,
 * `needsHuman` and `atEpochMs`.
 */
export type CompensationView =
  | { tool: string; kind: "compensation" | "corrective"; args: JsonValue | null }
  | {
      tool: string;
      kind: "compensation" | "corrective";
      /** Built from the call's arguments and result once the effect is confirmed; null before. */
      args: JsonValue | null;
      /** The idempotency key of the compensating call ("" when it was refused before any record). */
      key: string;
      /** That call's outcome when it was noted. */
      status: Outcome;
      /** True unless that call SUCCEEDED. */
      needsHuman: boolean;
      /** Epoch ms. */
      atEpochMs: number;
    };

/** The intent record of `calls.get` (secret argument values masked for every role but admin). */
export interface IntentRecordView {
  tenant: string;
  /** The idempotency key (32 hex characters). */
  key: string;
  runId: string;
  stepId: string;
  tool: string;
  /** The arguments as stored (secrets masked). */
  args: JsonValue;
  identity: Record<string, string>;
  status: IntentStatus;
  attempt: number;
  /** Epoch ms: until when the call or sweeper that took the record owns it (its lease). */
  leaseUntilEpochMs: number;
  /** Epoch ms: when the sweeper next takes the record once its lease has passed; null: only a person settles it. */
  recheckAtEpochMs: number | null;
  /**
   * @deprecated Read `leaseUntilEpochMs` and `recheckAtEpochMs`. Epoch ms: when the record is next
   * due (the later of its lease and its re-check); its lease when only a person settles it.
   */
  deadlineEpochMs: number;
  /** The tool's result, or null. */
  result: JsonValue;
  error: IntentError | null;
  compensation: CompensationView | null;
  resolution: Resolution | null;
  needsHuman: boolean;
  reconcileSweeps: number;
  version: number;
  /** Epoch ms. */
  createdAtEpochMs: number;
  /** Epoch ms. */
  updatedAtEpochMs: number;
  /** Epoch ms, or null while not settled. */
  finishedAtEpochMs: number | null;
  traceId: string | null;
  /** The key sent on the wire when it differs from `key`. */
  sentKey: string | null;
  /** Epoch ms from which a probe's "absent" is proof (the tool's settle window), or null. */
  settlesAtEpochMs: number | null;
}
