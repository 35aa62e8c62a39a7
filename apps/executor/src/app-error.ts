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
  }
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
