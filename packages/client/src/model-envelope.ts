/**
 * What a model should read when `execute` did not return an envelope. Used by the SDK adapters
 * (`@tristate/adapters`), and by any agent loop that hands tool results to a model.
 */

import type { Envelope } from "./api-types.ts";
import { isTristateApiError, isTristateTransportError, type TransportOutcome, type TransportReason } from "./errors.ts";

/**
 * An envelope made by the client when the executor gave no usable answer. Same fields as the
 * executor's, so the model reads it the same way: `retry_safe` is true (repeating the same call is
 * safe against Tristate), `idempotency_key` is empty (unknown here) and `attempt` 0.
 */
export interface TransportEnvelope {
  status: TransportOutcome;
  retry_safe: true;
  effect: string;
  action_taken: string;
  message: string;
  idempotency_key: "";
  attempt: 0;
  replayed: false;
  error: { code: `EXECUTOR_${TransportReason}`; message: string };
}

/** What the model reads as a tool result: the executor's envelope, or one made for a transport failure. */
export type ModelEnvelope = Envelope | TransportEnvelope;

function isEnvelope(value: unknown): value is Envelope {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v.status === "string" && typeof v.retry_safe === "boolean" && typeof v.message === "string";
}

/**
 * Turns an error of `execute` into what the model should read:
 * - a {@link TristateTransportError} → a {@link TransportEnvelope} with its outcome and advice;
 * - a refused call that carries the executor's envelope (400 invalid arguments, 404 unknown tool) →
 *   that envelope (FAILED_NO_EFFECT, `retry_safe: true`, the field and rule in `error`).
 * @returns undefined for anything else (bad or missing key, role, size limit, throttling, bad run or
 *   step ids): problems of the agent's setup, not of the model's call; rethrow those.
 */
export function toModelEnvelope(error: unknown): ModelEnvelope | undefined {
  if (isTristateTransportError(error)) {
    return {
      status: error.outcome,
      retry_safe: true,
      effect:
        error.outcome === "UNKNOWN"
          ? "not known: the call may have reached the executor, which then ran it at most once"
          : "nothing happened: the call never reached the executor",
      action_taken:
        error.outcome === "UNKNOWN"
          ? "sent the call to the executor; no answer came back"
          : "could not connect to the executor; nothing was sent",
      message: error.advice,
      idempotency_key: "",
      attempt: 0,
      replayed: false,
      error: { code: `EXECUTOR_${error.reason}`, message: error.message },
    };
  }
  if (isTristateApiError(error) && (error.httpStatus === 400 || error.httpStatus === 404) && isEnvelope(error.detail)) {
    return error.detail;
  }
  return undefined;
}
