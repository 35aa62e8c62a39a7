/**
 * Typed errors for tool implementations and the executor. Each class answers one question —
 * could the request have been delivered? — per DESIGN.md's error mapping:
 * - {@link NotSentError} → FAILED_NO_EFFECT: nothing reached the remote.
 * - {@link RejectedError} → FAILED_NO_EFFECT: the remote refused before doing any work (4xx).
 * - {@link AmbiguousError} → UNKNOWN: the request may have been delivered. When unsure, use this.
 * - {@link DeadlineExceededError} → FAILED_NO_EFFECT when raised before sending.
 *
 * Guards (`isNotSentError`, …) check a brand registered with `Symbol.for`, so they work across two
 * copies of this package.
 */
import { brandError, errorKindOf } from "./brand.ts";
import type { ReasonCode } from "./statuses.ts";

type ErrorKind = "not_sent" | "rejected" | "ambiguous" | "deadline_exceeded";

const brand: (error: Error, kind: ErrorKind) => void = brandError;
const kindOf = errorKindOf;

/** Fields shared by the classification errors. */
export interface ToolErrorFields {
  /** Closed reason code for envelopes and records. */
  code: ReasonCode;
  /** HTTP status of the remote's answer, when there was one. */
  httpStatus?: number;
  /** The lower-level error (`fetch failed`'s cause, a socket error). */
  cause?: unknown;
}

/**
 * The request provably never reached the remote (connection refused, DNS failure, connect timeout,
 * TLS handshake failure, pre-flight validation, deadline refused before sending).
 * The executor records FAILED_NO_EFFECT; trying again is safe.
 */
export class NotSentError extends Error {
  override readonly name = "NotSentError";
  readonly code: ReasonCode;
  readonly httpStatus: number | undefined = undefined;
  constructor(message: string, fields: Partial<ToolErrorFields> = {}) {
    super(message, { cause: fields.cause });
    this.code = fields.code ?? "NOT_SENT";
    brand(this, "not_sent");
  }
}

/**
 * The remote answered that it refused the request before doing any work (HTTP 400, 401, 403, 404,
 * 422, 429 by default). The executor records FAILED_NO_EFFECT.
 */
export class RejectedError extends Error {
  override readonly name = "RejectedError";
  readonly code: ReasonCode;
  /** The remote's HTTP status. */
  readonly httpStatus: number | undefined;
  /** The remote's answer body (parsed JSON or text), for the envelope. */
  readonly body: unknown;
  /** `Retry-After` in ms, when the remote sent one (RFC 9110 §10.2.3). */
  readonly retryAfterMs: number | undefined;
  constructor(message: string, fields: Partial<ToolErrorFields> & { body?: unknown; retryAfterMs?: number } = {}) {
    super(message, { cause: fields.cause });
    this.code = fields.code ?? "REJECTED";
    this.httpStatus = fields.httpStatus;
    this.body = fields.body;
    this.retryAfterMs = fields.retryAfterMs;
    brand(this, "rejected");
  }
}

/**
 * The request may have reached the remote: a read/headers/body timeout after sending, a reset after
 * the request was written, HTTP 408/409-in-progress/5xx. The executor records UNKNOWN and reconciles.
 */
export class AmbiguousError extends Error {
  override readonly name = "AmbiguousError";
  readonly code: ReasonCode;
  readonly httpStatus: number | undefined;
  /** The remote's answer body, when it is evidence (a 207's per-item statuses). */
  readonly body: unknown;
  /** `Retry-After` in ms (a 503 that asks for time): nothing is resent before it (RFC 9110 §10.2.3). */
  readonly retryAfterMs: number | undefined;
  constructor(message: string, fields: Partial<ToolErrorFields> & { body?: unknown; retryAfterMs?: number } = {}) {
    super(message, { cause: fields.cause });
    this.code = fields.code ?? "AMBIGUOUS";
    this.httpStatus = fields.httpStatus;
    this.body = fields.body;
    this.retryAfterMs = fields.retryAfterMs;
    brand(this, "ambiguous");
  }
}

/**
 * Not enough of the turn's budget is left to start (or go on with) a call.
 * Thrown by `Deadline.timeoutFor` before anything is sent, so the outcome is FAILED_NO_EFFECT.
 */
export class DeadlineExceededError extends Error {
  override readonly name = "DeadlineExceededError";
  readonly code = "DEADLINE_EXCEEDED" as const;
  /** Milliseconds that were left (after the reserve) when the call was refused; may be negative. */
  readonly remainingMs: number;
  /** The minimum the call needed, in ms. */
  readonly requiredMs: number;
  constructor(message: string, fields: { remainingMs: number; requiredMs: number }) {
    super(message);
    this.remainingMs = fields.remainingMs;
    this.requiredMs = fields.requiredMs;
    brand(this, "deadline_exceeded");
  }
}

/** True when `e` is a {@link NotSentError} (from any copy of this package). */
export const isNotSentError = (e: unknown): e is NotSentError => kindOf(e) === "not_sent";
/** True when `e` is a {@link RejectedError} (from any copy of this package). */
export const isRejectedError = (e: unknown): e is RejectedError => kindOf(e) === "rejected";
/** True when `e` is an {@link AmbiguousError} (from any copy of this package). */
export const isAmbiguousError = (e: unknown): e is AmbiguousError => kindOf(e) === "ambiguous";
/** True when `e` is a {@link DeadlineExceededError} (from any copy of this package). */
export const isDeadlineExceededError = (e: unknown): e is DeadlineExceededError => kindOf(e) === "deadline_exceeded";
