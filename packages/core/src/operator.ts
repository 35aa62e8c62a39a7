import { Deadline } from "./deadline.ts";
import type { Envelope } from "./envelope.ts";
import { isDeadlineExceededError } from "./errors.ts";
import type { AuditEntry, IntentPatch, IntentRecord, OperatorStore } from "./intent-store.ts";
import type { JsonObject } from "./json.ts";
import { settlesAtForLease } from "./lease.ts";
import { envelopeFor, event, type Runtime } from "./runtime.ts";
import { type SagaApi, undoStep } from "./saga.ts";
import { sendOnce } from "./send.ts";
import { OPERATOR_ACTIONS, type OperatorAction } from "./statuses.ts";
import type { AnyTool } from "./tool.ts";

/** An operator action id: a UUID or 8–100 URL-safe characters (`A–Z a–z 0–9 _ -`). */
export const OPERATOR_ACTION_ID_RULE = /^[A-Za-z0-9_-]{8,100}$/;
/** Longest operator note, characters. */
export const MAX_OPERATOR_NOTE_CHARS = 2000;

/** Slack added to an operator resend's default lease, ms (so the tool keeps its whole timeout). */
export const RESEND_SLACK_MS = 1000;

/** Who acts: the API key's id and name. */
export interface OperatorActor {
  keyId: string;
  name: string;
}

/** One operator action on a record waiting for a human. */
export interface OperatorActionInput {
  /** Idempotency key of the record. */
  key: string;
  action: OperatorAction;
  /** Why (required, at most {@link MAX_OPERATOR_NOTE_CHARS} characters); kept in the audit row and the timeline. */
  note: string;
  /** The record version the operator looked at; a changed record refuses the action (STALE_VERSION). */
  expectedVersion: number;
  /** Client-chosen id ({@link OPERATOR_ACTION_ID_RULE}); a repeat is answered from the audit, not re-done. */
  operatorActionId: string;
  actor: OperatorActor;
  /**
   * `resend_same_key` only: the resend's deadline (its lease). Default: the tool's timeout (at least the
   * executor's least call budget) plus the executor's reserve plus {@link RESEND_SLACK_MS}, from now.
   */
  deadline?: Deadline;
}

/** What an operator action did (or, `replayed`, what the first request with this id did). */
export interface OperatorActionResult {
  /** The record after the action (for a resend: after its outcome was written). */
  record: IntentRecord;
  /** The envelope an agent now reads for this record. */
  envelope: Envelope;
  /** True when answered from the audit row of a repeated `operatorActionId`; nothing was done now. */
  replayed: boolean;
  /** The audit row written with the change. */
  audit: AuditEntry;
  /** The record is older than the tool's key retention: the remote may no longer deduplicate its key. */
  keyExpired: boolean;
  /** Cautions for the operator (e.g. a resend of an `unsafe` tool, an expired key). */
  warnings: string[];
}

/** Why an operator action was refused (closed set). */
export const OPERATOR_ERROR_CODES = [
  /** A field of the input is invalid (`field` names it). */
  "INVALID_INPUT",
  /** No record with that key. */
  "NOT_FOUND",
  /** The record is not waiting for a human (SUCCEEDED, FAILED_NO_EFFECT, or PENDING within its lease). */
  "NOT_WAITING",
  /** The record changed since `expectedVersion`; `detail.winner` says who changed it and how. */
  "STALE_VERSION",
  /** The action is not allowed for this record or tool (resend of a read-only tool, compensation for now). */
  "NOT_ALLOWED",
  /** The `operatorActionId` was used for a different record or action. */
  "ACTION_ID_REUSED",
] as const;
/** One of {@link OPERATOR_ERROR_CODES}. */
export type OperatorErrorCode = (typeof OPERATOR_ERROR_CODES)[number];

/** Who made the latest change of a record, for a refused stale action. */
export interface ResolutionWinner {
  /** `operator`: an audited operator action; `executor`: the executor itself (a call, a probe, the sweeper). */
  by: "operator" | "executor";
  /** The operator's key name, or `executor`. */
  actor: string;
  /** The operator's action, or what the executor did (its resolution, else the record's status). */
  action: string;
  /** When, epoch ms. */
  at: number;
  /** The operator's note, or a sentence saying what the executor did. */
  note: string;
}

/** A refused operator action. Nothing was changed. */
export class OperatorActionError extends Error {
  override readonly name = "OperatorActionError";
  readonly code: OperatorErrorCode;
  /** The input field at fault (`INVALID_INPUT`, `NOT_ALLOWED` → `action`). */
  readonly field: string | undefined;
  /** Structured detail safe to show (the state, the winner). */
  readonly detail: JsonObject | undefined;
  constructor(code: OperatorErrorCode, message: string, options: { field?: string; detail?: JsonObject } = {}) {
    super(message);
    this.code = code;
    this.field = options.field;
    this.detail = options.detail;
  }
}

/** True for {@link OperatorActionError}. */
export function isOperatorActionError(error: unknown): error is OperatorActionError {
  return error instanceof OperatorActionError;
}

/**
 * Whether a person may settle the record now. Any UNKNOWN (in the human queue or not — an operator
 * may settle what reconciliation is still working on; the compare-and-set keeps the two from both
 * winning), and a PENDING past its lease (the owner's call is over). SUCCEEDED, FAILED_NO_EFFECT and
 * a PENDING within its lease (a call in flight, rule 2) are not.
 * @param nowEpochMs - epoch ms.
 */
export function waitingForHuman(record: IntentRecord, nowEpochMs: number): boolean {
  return record.status === "UNKNOWN" || (record.status === "PENDING" && record.deadlineEpochMs <= nowEpochMs);
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
  else if (tool.kind === "read_only") resendRefusal = `tool "${tool.name}" is read_only: there is no effect to resend`;
  else if (!waiting) resendRefusal = `the record is not waiting for a human (${stateName(record, nowEpochMs)})`;
  const resendWarnings: string[] = [];
  if (tool && tool.kind === "unsafe") {
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
    return record.deadlineEpochMs > nowEpochMs
      ? `PENDING (a call is in flight until ${new Date(record.deadlineEpochMs).toISOString()})`
      : "PENDING (past its lease)";
  }
  const parts = [record.resolution, record.needsHuman && record.resolution !== "needs_human" ? "needs_human" : null]
    .filter(Boolean)
    .join(", ");
  return parts ? `${record.status} (${parts})` : record.status;
}

function validate(input: OperatorActionInput): void {
  const bad = (field: string, rule: string): never => {
    throw new OperatorActionError("INVALID_INPUT", `${field}: ${rule}`, { field });
  };
  if (typeof input?.key !== "string" || input.key === "") bad("key", "must be a non-empty string");
  if (!(OPERATOR_ACTIONS as readonly string[]).includes(input.action)) {
    bad("action", `must be one of ${OPERATOR_ACTIONS.join(", ")}`);
  }
  if (typeof input.note !== "string" || input.note.trim() === "") bad("note", "must not be empty");
  if (input.note.length > MAX_OPERATOR_NOTE_CHARS) bad("note", `must be at most ${MAX_OPERATOR_NOTE_CHARS} characters`);
  if (!Number.isInteger(input.expectedVersion) || input.expectedVersion < 1) {
    bad("expectedVersion", "must be an integer ≥ 1");
  }
  if (typeof input.operatorActionId !== "string" || !OPERATOR_ACTION_ID_RULE.test(input.operatorActionId)) {
    bad("operatorActionId", "must be a UUID or 8–100 URL-safe characters (A–Z a–z 0–9 _ -)");
  }
  if (typeof input.actor?.keyId !== "string" || typeof input.actor.name !== "string") {
    bad("actor", "must name the acting key (keyId, name)");
  }
}

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
  validate(input);
  const prior = await store.findAudit(input.operatorActionId);
  if (prior) return replay(rt, prior, input);

  const record = await rt.store.get(input.key);
  if (!record) throw new OperatorActionError("NOT_FOUND", `no intent record with key ${input.key}`, { field: "key" });
  if (record.version !== input.expectedVersion) throw await staleError(rt, store, record, input.expectedVersion);
  const now = rt.clock.nowEpochMs();
  if (input.action === "compensate") return compensateAsOperator(rt, store, saga, record, input);
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

  let patch: IntentPatch;
  let resend: { tool: AnyTool; deadline: Deadline; timeoutMs: number } | null = null;
  switch (input.action) {
    case "confirm_effect":
      patch = {
        status: "SUCCEEDED",
        resolution: "human_confirmed_effect",
        needsHuman: false,
        error: null,
        finishedAtEpochMs: now,
      };
      break;
    case "confirm_no_effect":
      patch = {
        status: "FAILED_NO_EFFECT",
        resolution: "human_confirmed_no_effect",
        needsHuman: false,
        error: {
          code: "OPERATOR_CONFIRMED_NO_EFFECT",
          message: "an operator confirmed that the effect did not happen",
        },
        finishedAtEpochMs: now,
      };
      break;
    case "resend_same_key": {
      if (!tool || !options.resendAllowed) {
        throw new OperatorActionError("NOT_ALLOWED", `resend_same_key is refused: ${options.resendRefusal}`, {
          field: "action",
          detail: { tool: record.tool, kind: tool?.kind ?? null },
        });
      }
      const deadline =
        input.deadline ??
        Deadline.after(Math.max(tool.timeoutMs, rt.minCallBudgetMs) + rt.reserveMs + RESEND_SLACK_MS, rt.clock);
      let timeoutMs: number;
      try {
        timeoutMs = deadline.timeoutFor(tool.timeoutMs, rt.reserveMs, rt.minCallBudgetMs);
      } catch (error) {
        if (!isDeadlineExceededError(error)) throw error;
        throw new OperatorActionError("INVALID_INPUT", `deadline: ${error.message}`, { field: "deadline" });
      }
      resend = { tool, deadline, timeoutMs };
      patch = {
        status: "PENDING",
        attempt: record.attempt + 1,
        deadlineEpochMs: deadline.epochMs,
        error: null,
        resolution: null,
        needsHuman: false,
        finishedAtEpochMs: null,
        settlesAtEpochMs: settlesAtForLease(tool, deadline.epochMs),
      };
      break;
    }
  }

  const applied = await applyAudited(rt, store, record, input, now, patch, {
    ...(patch.status ? { toStatus: patch.status } : {}),
    ...(resend ? { attempt: record.attempt + 1 } : {}),
  });
  if (applied.kind === "answered") return applied.result;

  const warnings = resend ? options.resendWarnings : [];
  if (!resend) {
    return {
      record: applied.record,
      envelope: envelopeFor(rt, applied.record, false, actionTaken(input.action)),
      replayed: false,
      audit: applied.audit,
      keyExpired: options.keyExpired,
      warnings,
    };
  }
  const sent = await sendOnce(rt, resend.tool, applied.record, resend.deadline, resend.timeoutMs, {
    resolutionOnSuccess: "human_resent",
    spanName: `resend ${resend.tool.name}`,
  });
  let after: IntentRecord;
  let envelope: Envelope;
  switch (sent.kind) {
    case "settled":
      after = sent.record;
      envelope = sent.envelope;
      break;
    case "unknown":
      after = sent.record;
      envelope = envelopeFor(
        rt,
        after,
        false,
        "an operator resent it once with the same key; the outcome is unknown again; reconciliation scheduled",
      );
      break;
    case "lost":
      after = sent.record ?? applied.record;
      envelope = envelopeFor(rt, after, true);
      break;
  }
  return { record: after, envelope, replayed: false, audit: applied.audit, keyExpired: options.keyExpired, warnings };
}

function actionTaken(action: OperatorAction): string | undefined {
  switch (action) {
    case "confirm_effect":
      return "an operator confirmed the effect";
    case "confirm_no_effect":
      return "an operator confirmed that nothing happened";
    case "resend_same_key":
    case "compensate":
      return undefined;
  }
}

/** The answer to a repeated operatorActionId, from its audit row. */
async function replay(rt: Runtime, audit: AuditEntry, input: OperatorActionInput): Promise<OperatorActionResult> {
  if (audit.key !== input.key || audit.action !== input.action) {
    throw new OperatorActionError(
      "ACTION_ID_REUSED",
      `operatorActionId ${input.operatorActionId} was already used by ${audit.actorName} for ${audit.action} on record ${audit.key}; use a new id for a new action`,
      {
        field: "operatorActionId",
        detail: { key: audit.key, action: audit.action, actor: audit.actorName, at: audit.atEpochMs },
      },
    );
  }
  const record = audit.action === "resend_same_key" ? await resendOutcome(rt, audit) : audit.after;
  const options = operatorOptions(audit.before, rt.tools.get(audit.tool), audit.atEpochMs);
  return {
    record,
    envelope: envelopeFor(rt, record, true),
    replayed: true,
    audit,
    keyExpired: options.keyExpired,
    warnings: audit.action === "resend_same_key" ? options.resendWarnings : [],
  };
}

/**
 * The outcome of an audited resend: the record once the first request's send has written it (waiting
 * while it is PENDING within the resend's lease), else the record as it is now.
 */
async function resendOutcome(rt: Runtime, audit: AuditEntry): Promise<IntentRecord> {
  for (;;) {
    const current = await rt.store.get(audit.key);
    if (!current) return audit.after;
    const now = rt.clock.nowEpochMs();
    if (current.version !== audit.after.version || current.deadlineEpochMs <= now) return current;
    await rt.clock.sleep(Math.min(50, current.deadlineEpochMs - now));
  }
}

/** The refusal of a stale action, naming who made the latest change and how. */
async function staleError(
  rt: Runtime,
  store: OperatorStore,
  current: IntentRecord,
  expectedVersion: number,
): Promise<OperatorActionError> {
  const now = rt.clock.nowEpochMs();
  const winner = await latestChange(store, current);
  const how =
    winner.by === "operator"
      ? `operator ${winner.actor} chose ${winner.action} at ${new Date(winner.at).toISOString()} (note: "${winner.note}")`
      : `the executor changed it at ${new Date(winner.at).toISOString()}: ${winner.note}`;
  return new OperatorActionError(
    "STALE_VERSION",
    `record ${current.key} changed since version ${expectedVersion} (now version ${current.version}, ${stateName(current, now)}): ${how}; nothing was changed`,
    {
      field: "expectedVersion",
      detail: {
        winner: { ...winner },
        current: {
          status: current.status,
          resolution: current.resolution,
          needsHuman: current.needsHuman,
          version: current.version,
        },
      },
    },
  );
}

/**
 * Who made the record's latest change: the newest audited operator action when the record is still
 * as that action left it (for a resend, also its outcome write), else the executor itself.
 */
export async function latestChange(store: OperatorStore, current: IntentRecord): Promise<ResolutionWinner> {
  const last = await store.latestAudit(current.key);
  if (last) {
    const own = current.version - last.after.version;
    if (own === 0 || (own === 1 && last.action === "resend_same_key")) {
      return { by: "operator", actor: last.actorName, action: last.action, at: last.atEpochMs, note: last.note };
    }
  }
  return {
    by: "executor",
    actor: "executor",
    action: current.resolution ?? current.status,
    at: current.updatedAtEpochMs,
    note: executorNote(current),
  };
}

function executorNote(record: IntentRecord): string {
  if (record.needsHuman)
    return `reconciliation could not decide and sent it to the human queue (${record.error?.code ?? "needs_human"})`;
  switch (record.status) {
    case "SUCCEEDED":
      switch (record.resolution) {
        case "found":
          return "a probe found the effect";
        case "absent_resent":
          return "probes found nothing, so it was resent once with the same key, and it succeeded";
        default:
          return "the call succeeded";
      }
    case "FAILED_NO_EFFECT":
      return `the call failed without effect (${record.error?.code ?? "no code"})`;
    case "PENDING":
      return `a call took it (attempt ${record.attempt}, lease until ${new Date(record.deadlineEpochMs).toISOString()})`;
    case "UNKNOWN":
      return `reconciliation is working on it (${record.error?.code ?? "no evidence yet"})`;
  }
}

/** Default budget of a compensation an operator triggers, ms. */
const OPERATOR_COMPENSATION_BUDGET_MS = 30_000;

/**
 * `compensate`: an operator reverses a confirmed effect. The action is audited (record version
 * checked, `human_action` event, audit row) before the compensating call runs through the executor
 * like any call (its own intent record, key derived from the original key, probes, three outcomes).
 */
async function compensateAsOperator(
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

/**
 * The audited change every operator action makes: compare-and-set of the record (its version), a
 * `human_action` event and the audit row, in one transaction through the {@link OperatorStore}.
 * A repeated operatorActionId is answered from its audit row; a stale version is refused with the winner.
 * @returns the applied change, or the answer to give instead (a replay).
 * @throws OperatorActionError `STALE_VERSION` (with the winner) or `NOT_FOUND`.
 */
async function applyAudited(
  rt: Runtime,
  store: OperatorStore,
  record: IntentRecord,
  input: OperatorActionInput,
  now: number,
  patch: IntentPatch,
  eventExtra: JsonObject,
): Promise<
  { kind: "applied"; record: IntentRecord; audit: AuditEntry } | { kind: "answered"; result: OperatorActionResult }
> {
  const applied = await store.applyOperatorAction({
    key: record.key,
    expectedVersion: record.version,
    patch,
    events: [
      event(rt, record.key, "human_action", {
        action: input.action,
        actor: input.actor.name,
        actorKeyId: input.actor.keyId,
        note: input.note,
        operatorActionId: input.operatorActionId,
        fromStatus: record.status,
        ...eventExtra,
      }),
    ],
    nowEpochMs: now,
    audit: {
      operatorActionId: input.operatorActionId,
      actorKeyId: input.actor.keyId,
      actorName: input.actor.name,
      action: input.action,
      note: input.note,
    },
  });
  if (applied.kind === "duplicate") return { kind: "answered", result: await replay(rt, applied.audit, input) };
  if (applied.kind === "stale") {
    if (!applied.current) throw new OperatorActionError("NOT_FOUND", `no intent record with key ${input.key}`);
    throw await staleError(rt, store, applied.current, input.expectedVersion);
  }
  return { kind: "applied", record: applied.record, audit: applied.audit };
}
