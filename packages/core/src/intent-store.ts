import type { RecordedCompensation } from "./compensation.ts";
import type { JsonObject, JsonValue } from "./json.ts";
import type { RunAbort, RunAbortInput } from "./run-abort.ts";
import {
  type IntentStatus,
  type ReasonCode,
  type Resolution,
  type StoredResolution,
  shownResolution,
} from "./statuses.ts";

/** The error recorded on an intent record or carried by an envelope. */
export interface IntentError {
  /** Closed reason code, e.g. `READ_TIMEOUT`, `REJECTED`. */
  code: ReasonCode;
  /** Human-readable detail; never contains argument values unless the tool marks them loggable. */
  message: string;
  /** HTTP status of the remote's answer, when there was one. */
  httpStatus?: number;
  /** How long the remote asked to wait before trying again (`Retry-After`), ms. */
  retryAfterMs?: number;
  /**
   * Epoch ms, in the store's clock, before which nothing is sent again for this record (the answer's time + `retryAfterMs`):
   * no resend, no new attempt; a repeat call is answered without sending (issue 9 §7).
   */
  retryNotBeforeEpochMs?: number;
  /** The argument field at fault, for `INVALID_ARGUMENTS`. */
  field?: string;
  /** The rule that field broke, for `INVALID_ARGUMENTS`. */
  rule?: string;
}

/**
 * The durable intent record: written `PENDING` before a side-effecting call, updated after it.
 * Source: the source design's "The intent log: write before you call" and DESIGN.md's state machine.
 */
export interface IntentRecord {
  /** The tenant the record belongs to (its store's); with `key`, the primary key. */
  tenant: string;
  /** Idempotency key (32 lower-case hex characters), derived with the tenant; unique per tenant. */
  key: string;
  runId: string;
  stepId: string;
  tool: string;
  /**
   * The arguments of the current attempt, as the agent gave them (validated; the tool's schema parses
   * them again on every send, so a transform runs once). Every resend of an UNKNOWN sends these, never
   * a later rephrasing; a new attempt after FAILED_NO_EFFECT replaces them with its own (rule 3).
   */
  args: JsonValue;
  /** The canonical identity fields the key was derived from. */
  identity: Record<string, string>;
  status: IntentStatus;
  /** Attempt number: 1 for the first send, +1 for each new attempt after FAILED_NO_EFFECT and each resend. */
  attempt: number;
  /**
   * Lease (epoch ms): until when the call or reconciler that took the record owns it — the call's
   * deadline (a claim, a new attempt, a resend), or a sweeper's lease (`claimStale`). A PENDING record
   * whose lease has not passed belongs to a call still in flight (rule 2); no sweeper takes a record
   * before its lease has passed. A pass that schedules the record's next look ends its lease by then.
   * Judged by the store's clock (rule 9). Never absent (rule 8).
   */
  leaseUntilEpochMs: number;
  /**
   * When the sweeper is next due to take the record (epoch ms), once no lease holds it: a PENDING
   * record's lease end (written with the lease), an UNKNOWN's next try (when its lease ends, a settle
   * window or a `Retry-After`, the human queue's re-check). Null: never — only a person settles it.
   * `claimStale` leaves it as it is. A settled record keeps its last value.
   */
  recheckAtEpochMs: number | null;
  /** The tool's result (`undefined`: none recorded; `null` is a real result). */
  result: JsonValue | undefined;
  error: IntentError | null;
  /**
   * The compensation registered with the intent before the call, if the tool declares one (its
   * arguments filled in once the effect is confirmed; its call's key and outcome once run). Stores
   * parse it on read with `parseRecordedCompensation`.
   */
  compensation: RecordedCompensation | null;
  /**
   * How its UNKNOWN ended, once it has (null: it has not, or it was never UNKNOWN). Never
   * `needs_human`: waiting for a person is `needsHuman` alone; readers see the derived word through
   * `shownResolution`.
   */
  resolution: StoredResolution | null;
  /**
   * True while the record waits in the human queue — the one field that says so: an UNKNOWN whose
   * reconciliation could not decide, or a confirmed effect waiting for a correction or compensation.
   */
  needsHuman: boolean;
  /** How many sweeper passes have tried to reconcile this record without evidence. */
  reconcileSweeps: number;
  /** Optimistic-concurrency version; bumped by every update. */
  version: number;
  /** Epoch ms. */
  createdAtEpochMs: number;
  /** Epoch ms. */
  updatedAtEpochMs: number;
  /** Epoch ms the record reached SUCCEEDED or FAILED_NO_EFFECT, else null. */
  finishedAtEpochMs: number | null;
  /** W3C trace id (32 hex) of the call that created the record, when traced. */
  traceId: string | null;
  /**
   * The idempotency key sent on the wire (and used as the client reference by probes) for the
   * current attempt; null means `key`. A new attempt after a definite rejection that the remote may
   * have cached under the key (a 402 decline) gets a fresh one (rule 3); `key` stays the record's identity.
   */
  sentKey: string | null;
  /**
   * Epoch ms (the store's clock) from which a probe's "absent" proves absence: the end of the last
   * send (or its lease, when its outcome was never written) + the tool's settle window (rule 5b).
   * Null when no send awaits its window (the tool declares none, or the record is settled).
   */
  settlesAtEpochMs: number | null;
}

/**
 * A record `claimStale` took: as it is now (UNKNOWN, leased until the sweeper's lease), with the status
 * it was taken from. Taken from PENDING, the current attempt has no probe round of its own on record
 * (rounds run while a record is UNKNOWN, and every new attempt starts PENDING; only a reconciler past
 * its lease could still append a stray one), so the sweeper starts its rounds afresh without reading
 * the timeline: that can only add rounds, never skip one.
 */
export type LeasedRecord = IntentRecord & { previousStatus: "PENDING" | "UNKNOWN" };

/** The key a record's current attempt sends on the wire: `sentKey`, else the record's key. */
export function wireKey(record: Pick<IntentRecord, "key" | "sentKey">): string {
  return record.sentKey ?? record.key;
}

/**
 * A record (or any view of one) as agents and operators read it — API answers, the dashboard: the
 * stored fields with `resolution` as {@link shownResolution} derives it (`needs_human` while an
 * UNKNOWN waits for a person). Never stored.
 */
export type ShownRecord<R extends ShowableRecord> = Omit<R, "resolution"> & {
  resolution: Resolution | null;
  /**
   * @deprecated Read `leaseUntilEpochMs` and `recheckAtEpochMs`. Kept in API answers until their
   * readers have moved: the old field's value — the time the record was next due (a PENDING record's
   * lease, an UNKNOWN's next try: the later of its lease and its re-check) — and, for a record only a
   * person settles (no re-check), its lease (no longer a time a century ahead). See {@link legacyDeadline}.
   */
  deadlineEpochMs: number;
};

/** The fields {@link shownRecord} reads. */
export type ShowableRecord = Pick<
  IntentRecord,
  "status" | "needsHuman" | "resolution" | "leaseUntilEpochMs" | "recheckAtEpochMs"
>;

/**
 * The edge between the stored record and its readers: `record` with the derived words of
 * {@link ShownRecord}. The one function API answers and read views go through.
 */
export function shownRecord<R extends ShowableRecord>(record: R): ShownRecord<R> {
  return { ...record, resolution: shownResolution(record), deadlineEpochMs: legacyDeadline(record) };
}

/**
 * The value of the retired `deadlineEpochMs` (epoch ms): when the record is next due — the later of
 * its lease and its re-check — or its lease when it has no re-check (only a person settles it).
 */
export function legacyDeadline(record: Pick<IntentRecord, "leaseUntilEpochMs" | "recheckAtEpochMs">): number {
  const { leaseUntilEpochMs: lease, recheckAtEpochMs: recheck } = record;
  return recheck === null ? lease : Math.max(lease, recheck);
}

/**
 * What `claim` inserts: a PENDING record without its bookkeeping fields. `tenant` may be omitted: the
 * store writes its own; a store refuses a record of another tenant. The store sets `recheckAtEpochMs`
 * to the lease (a PENDING record is due for the sweeper when its lease ends).
 */
export type NewIntentRecord = Partial<Pick<IntentRecord, "tenant">> &
  Omit<
    IntentRecord,
    | "tenant"
    | "status"
    | "version"
    | "updatedAtEpochMs"
    | "finishedAtEpochMs"
    | "resolution"
    | "needsHuman"
    | "reconcileSweeps"
    | "result"
    | "error"
    | "sentKey"
    | "settlesAtEpochMs"
    | "recheckAtEpochMs"
  >;

/**
 * Fields an update may change. A field absent from the patch is left unchanged; `result` present in
 * the patch — even as `undefined` — is written (`undefined`: no result, SQL NULL).
 */
export type IntentPatch = Partial<
  Pick<
    IntentRecord,
    | "status"
    | "attempt"
    | "leaseUntilEpochMs"
    | "recheckAtEpochMs"
    | "result"
    | "error"
    | "compensation"
    | "resolution"
    | "needsHuman"
    | "reconcileSweeps"
    | "finishedAtEpochMs"
    | "traceId"
    | "args"
    | "sentKey"
    | "settlesAtEpochMs"
  >
>;

/** Kinds of timeline events (append-only). */
export const INTENT_EVENT_TYPES = [
  "created",
  "sent",
  "outcome",
  "lease_expired",
  "probe",
  "resend",
  "conflict",
  "needs_human",
  "sweep",
  "human_action",
  "compensation",
  "late_answer",
] as const;
/** A timeline event type; see {@link INTENT_EVENT_TYPES}. */
export type IntentEventType = (typeof INTENT_EVENT_TYPES)[number];

/** One entry of a record's append-only timeline. */
export interface IntentEvent {
  key: string;
  type: IntentEventType;
  /** Epoch ms. */
  atEpochMs: number;
  /** Event detail, e.g. `{ outcome, code }` or `{ probe: "key", answer: "found" }`. */
  data: JsonObject;
}

/** One step of a run's declared plan. */
export interface PlanStep {
  stepId: string;
  tool: string;
}

/** A stored event, with its sequence number (increasing per store). */
export interface StoredIntentEvent extends IntentEvent {
  id: number;
}

/** Result of {@link IntentStore.claim}. */
export type ClaimResult =
  | { claimed: true; record: IntentRecord }
  /** Lost: a record for the same key, or the same (runId, stepId, tool), already exists. */
  | { claimed: false; existing: IntentRecord };

/** Options for writes after the call. */
export interface WriteOptions {
  /**
   * Apply the update only if the record's lease (`leaseUntilEpochMs`) has passed by the store's clock
   * (PostgreSQL `now()`), never a replica's (rule 9). Used to take over a PENDING record whose owner
   * may have crashed: a replica whose clock runs ahead must not take a live record.
   */
  onlyIfLeaseExpired?: boolean;
  /**
   * When false, the store may acknowledge before the write is flushed to disk
   * (PostgreSQL `synchronous_commit = off`). Only outcome writes use this: a lost outcome
   * leaves the record PENDING, which the sweeper reconciles with a probe. Default true.
   */
  durable?: boolean;
}

/**
 * The intent log port. `packages/db` implements it on PostgreSQL; {@link MemoryIntentStore} is for tests.
 * Every method is atomic; events passed with a write are stored in the same transaction.
 */
export interface IntentStore {
  /**
   * The tenant this store is confined to: every read and write of its methods concerns only that
   * tenant's records, events and plans (issue 10). Absent: `default` (`DEFAULT_TENANT`).
   */
  readonly tenant?: string;
  /**
   * Inserts a PENDING record (version 1) unless a record exists with the same key or the same
   * (runId, stepId, tool). Exactly one of several racing claims wins (rule 7); losers get the
   * existing record. Must be durable before it resolves (it is written before the call is sent).
   * A claim whose run has been aborted ({@link IntentStore.markRunAborted}) inserts nothing (rule 13):
   * a repeat of an existing record still gets it; a new step throws.
   * @throws RunAbortedError when no record exists for the key or the (run, step, tool) and the run was aborted.
   */
  claim(record: NewIntentRecord, events: IntentEvent[], nowEpochMs: number): Promise<ClaimResult>;
  /** The record for `key`, or null. */
  get(key: string): Promise<IntentRecord | null>;
  /**
   * Compare-and-set: applies `patch` only if the stored version equals `expectedVersion`, bumps the
   * version, sets `updatedAtEpochMs = nowEpochMs`, and appends `events` in the same transaction.
   * @returns the updated record, or null when the version did not match (someone else changed it).
   * @throws WriteRefusedError when the store refuses these values for good (the same write can never
   *   succeed: PostgreSQL's data exceptions and program limits); other errors are taken as transient.
   */
  update(
    key: string,
    expectedVersion: number,
    patch: IntentPatch,
    events: IntentEvent[],
    nowEpochMs: number,
    options?: WriteOptions,
  ): Promise<IntentRecord | null>;
  /** Appends events without changing the record. */
  appendEvents(events: IntentEvent[]): Promise<void>;
  /** The record's timeline, oldest first. */
  listEvents(key: string): Promise<StoredIntentEvent[]>;
  /**
   * Takes up to `limit` records due for reconciliation — PENDING or UNKNOWN, due (`recheckAtEpochMs`
   * before now: a PENDING record's lease end, an UNKNOWN's next try) and not leased (`leaseUntilEpochMs`
   * before now) — oldest `recheckAtEpochMs` first, skipping rows another sweeper holds (`FOR UPDATE
   * SKIP LOCKED`). A record without a re-check (only a person settles it) is never taken.
   * `nowEpochMs` must be the store's clock ({@link IntentStore.clockEpochMs} where implemented), never
   * a replica's (rule 9). Each taken record is moved to UNKNOWN with `leaseUntilEpochMs` set to the
   * given lease (so no other sweeper takes it until then) and its `recheckAtEpochMs` left as it was,
   * version + 1, and a `lease_expired` (was PENDING) or `sweep` event (`previousDeadlineEpochMs`: when
   * it was due, the later of its lease and its re-check). Each comes back as it is now, with the
   * status it was taken from ({@link LeasedRecord}).
   */
  claimStale(options: { nowEpochMs: number; limit: number; leaseUntilEpochMs: number }): Promise<LeasedRecord[]>;
  /** Every record of a run, oldest first (creation time, then key). */
  listByRun(runId: string): Promise<IntentRecord[]>;
  /**
   * Stores (or replaces) a run's declared plan: its steps in order. Used to refuse irreversible
   * steps while a later fallible step is not done (source design: "irreversible calls last").
   */
  savePlan(runId: string, steps: PlanStep[], nowEpochMs: number): Promise<void>;
  /** The run's declared plan, or null. */
  getPlan(runId: string): Promise<PlanStep[] | null>;
  /**
   * Other records of `tool` with the same canonical identity, created at or after
   * `sinceEpochMs` (epoch ms), excluding `excludeKey`: the records an identity probe's match could
   * belong to (rule 5g).
   */
  listByIdentity(
    tool: string,
    identity: Record<string, string>,
    sinceEpochMs: number,
    excludeKey: string,
  ): Promise<IntentRecord[]>;
  /**
   * Records that `runId` is aborted (rule 13), once: the first abort's actor, reason and time (the
   * store's clock) stay; a later one gets them back (`first: false`). Committed before it resolves;
   * from then on a claim of a new step of the run is refused ({@link IntentStore.claim}).
   */
  markRunAborted(runId: string, by: RunAbortInput): Promise<{ abort: RunAbort; first: boolean }>;
  /** The run's abort, or null when it was never aborted. */
  getRunAbort(runId: string): Promise<RunAbort | null>;
  /**
   * Moves the run's archived records (if the store archives settled records) back to the live log, so
   * an abort sees, and can undo, steps the archive moved (rules 13 and 15). Optional: a store that
   * never archives has nothing to move.
   * @returns how many records were moved back.
   */
  restoreArchivedRun?(runId: string): Promise<number>;
  /**
   * Records of aborted runs whose undo has not run: SUCCEEDED, not in the human queue, not a
   * compensation step, with a registered compensation (or correction) that has not been called — or,
   * for a tool named in `uncorrectableTools` (irreversible, no corrective: nothing registered), never
   * sent to a person for correction (no `needs_human` event with code `IRREVERSIBLE_NEEDS_CORRECTION`)
   * — last changed at or before `settledByEpochMs` (epoch ms, the store's clock), oldest abort first,
   * at most `limit`. What the sweeper undoes (or hands to a person) when the process that settled
   * them died first.
   */
  listUndoDue(options: {
    settledByEpochMs: number;
    limit: number;
    uncorrectableTools?: readonly string[];
  }): Promise<IntentRecord[]>;
  /**
   * The store's clock, epoch ms: the one that judges leases, staleness and settle windows (rule 9;
   * PostgreSQL's `now()`). Optional: without it the executor's clock is used (in-memory tests).
   * Times the executor writes are taken relative to its own clock and stored in this one.
   */
  clockEpochMs?(): Promise<number>;
  /**
   * A view of the same intent log confined to `tenant` (same connections, same clock): how a
   * service serves many tenants with one log. Optional for single-tenant stores.
   * @throws TypeError for a tenant name that breaks `TENANT_PATTERN`.
   */
  forTenant?(tenant: string): IntentStore;
}
