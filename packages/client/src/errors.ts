/**
 * The client's errors. Two families, told apart with the `isX` guards (which survive two copies of
 * this package, as they test a `Symbol.for` brand rather than `instanceof`):
 *
 * - {@link TristateApiError}: the executor answered and refused the request (400, 401, 403, 404, 409,
 *   413, 429), one subclass per status, each carrying `field` (the input field at fault, when the
 *   executor named one) and `detail`. Nothing was run.
 * - {@link TristateTransportError}: no usable answer (connection refused, reset, timeout, a 5xx or a
 *   408, an answer that is not the API's JSON). Its `outcome` says what the caller may assume:
 *   `FAILED_NO_EFFECT` when the request provably never left, `UNKNOWN` when it was (or may have been)
 *   written. Against Tristate, repeating the same call is always safe: the executor replays or
 *   reconciles, so `retrySafe` is true in both cases.
 */

const API_BRAND = Symbol.for("@tristate/client/api-error");
const TRANSPORT_BRAND = Symbol.for("@tristate/client/transport-error");

/** The statuses with their own error class. */
export const API_ERROR_STATUSES = [400, 401, 403, 404, 409, 413, 429] as const;
/** One of {@link API_ERROR_STATUSES}. */
export type ApiErrorStatus = (typeof API_ERROR_STATUSES)[number];

/** What the executor said about a refused request. */
export interface ApiErrorInit {
  /** HTTP status of the answer. */
  httpStatus: number;
  /** The tRPC error code (`BAD_REQUEST`, `UNAUTHORIZED`, …). */
  code: string;
  /** The executor's message (safe to show). */
  message: string;
  /** The procedure called, e.g. `calls.execute`. */
  procedure: string;
  /** The input field at fault (`runId`, `args.amount`, `deadlineEpochMs`, …), when named. */
  field?: string | undefined;
  /** Structured detail (for a refused tool call: the envelope; for a 409: the winner). */
  detail?: unknown;
  /** For a 429: how long to wait before trying again, ms (from `Retry-After`). */
  retryAfterMs?: number | undefined;
  /** The answer's `X-Request-Id` (also `error.data.requestId`): quote it to find the executor's log line and span. */
  requestId?: string | undefined;
}

/**
 * The executor refused the request (a 4xx answer). Nothing was run. Use the subclasses or
 * `httpStatus` to tell the cases apart; `field` names the input at fault.
 */
export class TristateApiError extends Error {
  override readonly name: string = "TristateApiError";
  readonly [API_BRAND] = true;
  /** HTTP status of the answer. */
  readonly httpStatus: number;
  /** The tRPC error code (`BAD_REQUEST`, `UNAUTHORIZED`, `FORBIDDEN`, `NOT_FOUND`, `CONFLICT`, …). */
  readonly code: string;
  /** The procedure called, e.g. `calls.execute`. */
  readonly procedure: string;
  /** The input field at fault, when the executor named one (e.g. `args.amount`). */
  readonly field: string | undefined;
  /** Structured detail: the envelope of a refused tool call (400 arguments, 404 tool), a 409's winner. */
  readonly detail: unknown;
  /** For a 429: how long to wait, ms (from `Retry-After`); otherwise undefined. */
  readonly retryAfterMs: number | undefined;
  /** The executor's request id of the answer (`X-Request-Id`), when it sent one. */
  readonly requestId: string | undefined;
  constructor(init: ApiErrorInit) {
    super(init.message);
    this.httpStatus = init.httpStatus;
    this.code = init.code;
    this.procedure = init.procedure;
    this.field = init.field;
    this.detail = init.detail;
    this.retryAfterMs = init.retryAfterMs;
    this.requestId = init.requestId;
  }
}

/** 400: the input is invalid; `field` names it (e.g. `runId`, `args.amount`, `deadlineEpochMs`). Fix the input. */
export class TristateBadRequestError extends TristateApiError {
  override readonly name = "TristateBadRequestError";
}
/** 401: no key, or a bad or revoked one. Check the API key. */
export class TristateUnauthorizedError extends TristateApiError {
  override readonly name = "TristateUnauthorizedError";
}
/** 403: the key's role may not do this (e.g. a viewer key calling tools). Use a key with the right role. */
export class TristateForbiddenError extends TristateApiError {
  override readonly name = "TristateForbiddenError";
}
/** 404: an unknown tool (`field: "tool"`) or record (`field: "key"`). */
export class TristateNotFoundError extends TristateApiError {
  override readonly name = "TristateNotFoundError";
}
/** 409: a conflict (a record not waiting for a person, a stale version); `detail` says who won. */
export class TristateConflictError extends TristateApiError {
  override readonly name = "TristateConflictError";
}
/** 413: the request body or the answer is over the executor's size limit. Send less, or ask for less. */
export class TristatePayloadTooLargeError extends TristateApiError {
  override readonly name = "TristatePayloadTooLargeError";
}
/** 429: too many failed keys from this address; wait `retryAfterMs` before trying again. */
export class TristateRateLimitedError extends TristateApiError {
  override readonly name = "TristateRateLimitedError";
}

/** Builds the error class for a refused request's status (other 4xx: the base class). */
export function apiErrorFor(init: ApiErrorInit): TristateApiError {
  switch (init.httpStatus) {
    case 400:
      return new TristateBadRequestError(init);
    case 401:
      return new TristateUnauthorizedError(init);
    case 403:
      return new TristateForbiddenError(init);
    case 404:
      return new TristateNotFoundError(init);
    case 409:
      return new TristateConflictError(init);
    case 413:
      return new TristatePayloadTooLargeError(init);
    case 429:
      return new TristateRateLimitedError(init);
    default:
      return new TristateApiError(init);
  }
}

/** True for any {@link TristateApiError} (also one thrown by another copy of this package). */
export function isTristateApiError(error: unknown): error is TristateApiError {
  return typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[API_BRAND] === true;
}

/** What the caller may assume after a transport failure: one of two of the three outcomes. */
export type TransportOutcome = "FAILED_NO_EFFECT" | "UNKNOWN";

/** Advice for a request that was (or may have been) written and got no usable answer. */
export const UNKNOWN_ADVICE =
  "No answer came back, and the request may have reached the executor. To learn the outcome, repeat the same call: the executor replays or reconciles (the same run, step, tool and arguments are one effect, never two).";
/** Advice for a request that never left this process (nothing reached the executor). */
export const NOT_SENT_ADVICE =
  "The request never reached the executor (it could not connect); nothing happened. Try the same call again once the executor is reachable.";

/** Why the transport failed, for logs and for `error.code` of the envelope made from it. */
export type TransportReason =
  | "NOT_CONNECTED"
  | "CANCELLED_BEFORE_SEND"
  | "CANCELLED"
  | "NO_ANSWER"
  | "TIMED_OUT"
  | "SERVER_ERROR"
  | "REQUEST_TIMEOUT"
  | "BAD_ANSWER";

/** What a transport failure carries. */
export interface TransportErrorInit {
  outcome: TransportOutcome;
  reason: TransportReason;
  procedure: string;
  message: string;
  /** HTTP status when an answer came (5xx, 408), else undefined. */
  httpStatus?: number | undefined;
  /** The answer's `X-Request-Id`, when an answer came with one. */
  requestId?: string | undefined;
  cause?: unknown;
}

/**
 * No usable answer from the executor. `outcome` is `FAILED_NO_EFFECT` when the request provably
 * never left (connection refused, DNS, connect timeout), else `UNKNOWN` (written, then reset or timed
 * out; a 5xx; a 408; a garbled answer). Either way `retrySafe` is true: repeating the same call (same
 * run, step, tool, arguments) is safe, as the executor replays or reconciles. `advice` says so.
 */
export class TristateTransportError extends Error {
  override readonly name = "TristateTransportError";
  readonly [TRANSPORT_BRAND] = true;
  /** What may be assumed: `FAILED_NO_EFFECT` (nothing sent) or `UNKNOWN` (may have been delivered). */
  readonly outcome: TransportOutcome;
  /** Why. */
  readonly reason: TransportReason;
  /** The procedure called, e.g. `calls.execute`. */
  readonly procedure: string;
  /** HTTP status when an answer came (5xx, 408), else undefined. */
  readonly httpStatus: number | undefined;
  /** The executor's request id of the answer (`X-Request-Id`), when an answer came with one. */
  readonly requestId: string | undefined;
  /** Always true against Tristate: the same call again is replayed or reconciled, never run twice. */
  readonly retrySafe = true;
  /** What to do next, addressed to the caller (or the model). */
  readonly advice: string;
  constructor(init: TransportErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.outcome = init.outcome;
    this.reason = init.reason;
    this.procedure = init.procedure;
    this.httpStatus = init.httpStatus;
    this.requestId = init.requestId;
    this.advice = init.outcome === "UNKNOWN" ? UNKNOWN_ADVICE : NOT_SENT_ADVICE;
  }
}

/** True for any {@link TristateTransportError} (also one thrown by another copy of this package). */
export function isTristateTransportError(error: unknown): error is TristateTransportError {
  return typeof error === "object" && error !== null && (error as Record<symbol, unknown>)[TRANSPORT_BRAND] === true;
}
