import type { Deadline } from "../deadline.ts";
import type { Envelope } from "../envelope.ts";
import type { IntentRecord } from "../intent-store.ts";
import type { AuditEntry } from "../operator-store.ts";
import { OPERATOR_ACTIONS, type OperatorAction } from "../statuses.ts";
import { textRuleBroken } from "../text.ts";
import { OperatorActionError } from "./errors.ts";

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

/**
 * Checks the shape of an operator action's input before anything is read or written.
 * @throws OperatorActionError `INVALID_INPUT`, naming the first field at fault.
 */
export function validateOperatorActionInput(input: OperatorActionInput): void {
  const bad = (field: string, rule: string): never => {
    throw new OperatorActionError("INVALID_INPUT", `${field}: ${rule}`, { field });
  };
  if (typeof input?.key !== "string" || input.key === "") bad("key", "must be a non-empty string");
  if (!(OPERATOR_ACTIONS as readonly string[]).includes(input.action)) {
    bad("action", `must be one of ${OPERATOR_ACTIONS.join(", ")}`);
  }
  if (typeof input.note !== "string" || input.note.trim() === "") bad("note", "must not be empty");
  if (input.note.length > MAX_OPERATOR_NOTE_CHARS) bad("note", `must be at most ${MAX_OPERATOR_NOTE_CHARS} characters`);
  const noteRule = textRuleBroken(input.note);
  if (noteRule) bad("note", noteRule);
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
