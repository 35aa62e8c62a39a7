import { isInvalidArgumentsError, isOperatorActionError, type OperatorActionError } from "@tristate/core";
import { isCursorError, isQueryInputError } from "@tristate/db";
import { TRPCError } from "@trpc/server";

/** The service's closed set of error codes, mapped to tRPC (and so HTTP) codes in {@link toTRPCError} only. */
export const APP_ERROR_CODES = [
  "UNAUTHENTICATED",
  "FORBIDDEN",
  "BAD_INPUT",
  "NOT_FOUND",
  "CONFLICT",
  "NOT_READY",
  "UNAVAILABLE",
  "INTERNAL",
] as const;
export type AppErrorCode = (typeof APP_ERROR_CODES)[number];

const BRAND = Symbol.for("tristate.error.kind");

/** The one application error type: a code, a safe message, and optional structured detail. */
export class AppError extends Error {
  override readonly name = "AppError";
  readonly code: AppErrorCode;
  /** The input field at fault, for BAD_INPUT. */
  readonly field: string | undefined;
  /** Extra structured detail safe to show (e.g. the envelope, the winner of a race). */
  readonly detail: unknown;
  constructor(code: AppErrorCode, message: string, options: { field?: string; detail?: unknown } = {}) {
    super(message);
    this.code = code;
    this.field = options.field;
    this.detail = options.detail;
    Object.defineProperty(this, BRAND, { value: "app", enumerable: false });
  }
}

/** True when `error` is an {@link AppError} (checked by its brand, as the core's guards do). */
export function isAppError(error: unknown): error is AppError {
  return typeof error === "object" && error !== null && (error as { [BRAND]?: unknown })[BRAND] === "app";
}

/**
 * A refused operator action as the service's error: `INVALID_INPUT` → BAD_INPUT; `NOT_FOUND` →
 * NOT_FOUND; `NOT_WAITING`, `STALE_VERSION`, `NOT_ALLOWED`, `ACTION_ID_REUSED` → CONFLICT. `detail`
 * carries `reason` (the operator error code) and the error's own detail (`winner` for a stale version).
 */
function fromOperatorError(error: OperatorActionError): AppError {
  const options = {
    ...(error.field ? { field: error.field } : {}),
    detail: { reason: error.code, ...(error.detail ?? {}) },
  };
  switch (error.code) {
    case "INVALID_INPUT":
      return new AppError("BAD_INPUT", error.message, options);
    case "NOT_FOUND":
      return new AppError("NOT_FOUND", error.message, options);
    case "NOT_WAITING":
    case "STALE_VERSION":
    case "NOT_ALLOWED":
    case "ACTION_ID_REUSED":
      return new AppError("CONFLICT", error.message, options);
  }
}

/**
 * The error a procedure threw as the service's {@link AppError}, or undefined for one the service
 * does not know (an internal error: 500, its detail only in the log). The one place that knows:
 * - an {@link AppError} as it is;
 * - a refused operator action (`OperatorActionError`, see {@link fromOperatorError});
 * - a dashboard query's invalid input (`QueryInputError`) → BAD_INPUT naming the field, its message;
 * - a cursor an operator list did not return (`CursorError`) → BAD_INPUT `cursor: <rule>`;
 * - a call's arguments that fail the tool (`InvalidArgumentsError`) → BAD_INPUT `<field> <rule>`,
 *   field `args.<path>`.
 * The executor's transient database failures (503) are told apart in the tRPC base middleware, which
 * also sets `Retry-After`.
 */
export function appErrorOf(error: unknown): AppError | undefined {
  if (isAppError(error)) return error;
  if (isOperatorActionError(error)) return fromOperatorError(error);
  if (isQueryInputError(error)) return new AppError("BAD_INPUT", error.message, { field: error.field });
  if (isCursorError(error)) return new AppError("BAD_INPUT", `${error.field}: ${error.rule}`, { field: error.field });
  if (isInvalidArgumentsError(error)) {
    return new AppError("BAD_INPUT", `${error.field} ${error.rule}`, { field: error.field });
  }
  return undefined;
}

const TRPC_CODE = {
  UNAUTHENTICATED: "UNAUTHORIZED",
  FORBIDDEN: "FORBIDDEN",
  BAD_INPUT: "BAD_REQUEST",
  NOT_FOUND: "NOT_FOUND",
  CONFLICT: "CONFLICT",
  NOT_READY: "SERVICE_UNAVAILABLE",
  UNAVAILABLE: "SERVICE_UNAVAILABLE",
  INTERNAL: "INTERNAL_SERVER_ERROR",
} as const satisfies Record<AppErrorCode, TRPCError["code"]>;

/** Maps an AppError onto a TRPCError (the only place that does). */
export function toTRPCError(error: AppError): TRPCError {
  return new TRPCError({ code: TRPC_CODE[error.code], message: error.message, cause: error });
}
