import { brandError, errorKindOf } from "../brand.ts";
import type { JsonObject } from "../json.ts";

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
    brandError(this, "operator_action");
  }
}

/** True for an {@link OperatorActionError} (from any copy of this package: the guard checks a brand). */
export function isOperatorActionError(error: unknown): error is OperatorActionError {
  return errorKindOf(error) === "operator_action";
}
