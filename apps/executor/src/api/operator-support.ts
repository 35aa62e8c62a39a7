import { isOperatorActionError, OPERATOR_ACTIONS } from "@tristate/core";
import { z } from "zod";
import { AppError } from "../app-error.ts";

/**
 * Maps a refused operator action onto the service's errors: `INVALID_INPUT` → BAD_INPUT;
 * `NOT_FOUND` → NOT_FOUND; `NOT_WAITING`, `STALE_VERSION`, `NOT_ALLOWED`, `ACTION_ID_REUSED` →
 * CONFLICT. `detail` carries `reason` (the operator error code) and the error's own detail
 * (`winner` for a stale version). Other errors pass unchanged.
 */
export function operatorErrorToAppError(error: unknown): unknown {
  if (!isOperatorActionError(error)) return error;
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

/** An idempotency key (32 lower-case hex characters). */
export const keySchema = z.string().regex(/^[0-9a-f]{32}$/, "must be 32 lower-case hex characters");

/** An operator action. */
export const operatorActionSchema = z.enum(OPERATOR_ACTIONS);
