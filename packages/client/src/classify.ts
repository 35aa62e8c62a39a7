/**
 * "Could the request have reached the executor?" for a failed `fetch` — the same question the
 * executor asks of every remote (DESIGN.md "Error mapping"). Only errors raised before a byte of the
 * request could be written are "not sent"; everything else is UNKNOWN. When unsure, UNKNOWN: a wrong
 * UNKNOWN costs one repeated call (which the executor replays), a wrong "not sent" a gap.
 */
import { TristateTransportError } from "./errors.ts";

/**
 * Error codes (Node's and undici's) raised before the request is written: connection refused, name
 * resolution, connect timeout, no route, TLS handshake failures, a URL or request fetch refused to build.
 */
const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_NONAME",
  "EAI_FAIL",
  "ENETUNREACH",
  "EHOSTUNREACH",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_INVALID_ARG",
  "ERR_INVALID_URL",
  "ERR_TLS_CERT_ALTNAME_INVALID",
  "CERT_HAS_EXPIRED",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
]);

/** Every `code` found on the error, its `cause` chain and an AggregateError's members (happy eyeballs). */
function codesOf(error: unknown, depth = 0): string[] {
  if (depth > 5 || typeof error !== "object" || error === null) return [];
  const codes: string[] = [];
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") codes.push(code);
  const members = (error as { errors?: unknown }).errors;
  if (Array.isArray(members)) for (const member of members) codes.push(...codesOf(member, depth + 1));
  codes.push(...codesOf((error as { cause?: unknown }).cause, depth + 1));
  return codes;
}

/**
 * Classifies a `fetch` rejection. `timedOut` is true when the client's own timer aborted the request;
 * `cancelled` when the caller's signal did (after the request may have been written: `CANCELLED`, UNKNOWN).
 * @returns a {@link TristateTransportError}: `FAILED_NO_EFFECT` only when every code found says the
 *   request was never written (and it was not our own abort); otherwise `UNKNOWN`.
 */
export function classifyFetchFailure(
  error: unknown,
  procedure: string,
  timedOut: boolean,
  cancelled = false,
): TristateTransportError {
  const codes = codesOf(error);
  const detail = codes.length ? ` (${[...new Set(codes)].join(", ")})` : "";
  if (cancelled) {
    // The caller's own abort once the request may have left: the outcome is open, and it says why.
    return new TristateTransportError({
      outcome: "UNKNOWN",
      reason: "CANCELLED",
      procedure,
      message: `${procedure}: cancelled by the caller while waiting for the answer; the request may have been delivered`,
      cause: error,
    });
  }
  if (!timedOut && codes.length > 0 && codes.every((code) => NOT_SENT_CODES.has(code))) {
    return new TristateTransportError({
      outcome: "FAILED_NO_EFFECT",
      reason: "NOT_CONNECTED",
      procedure,
      message: `${procedure}: could not connect to the executor${detail}; nothing was sent`,
      cause: error,
    });
  }
  return new TristateTransportError({
    outcome: "UNKNOWN",
    reason: timedOut ? "TIMED_OUT" : "NO_ANSWER",
    procedure,
    message: timedOut
      ? `${procedure}: no answer from the executor in time; the request may have been delivered`
      : `${procedure}: the connection to the executor failed${detail}; the request may have been delivered`,
    cause: error,
  });
}

/** A 5xx or a 408 (or any answer that is not the API's JSON): delivered, or possibly so → UNKNOWN. */
export function answerFailure(
  procedure: string,
  httpStatus: number,
  text: string,
  reason: "SERVER_ERROR" | "REQUEST_TIMEOUT" | "BAD_ANSWER",
  requestId?: string,
): TristateTransportError {
  const excerpt = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return new TristateTransportError({
    outcome: "UNKNOWN",
    reason,
    procedure,
    httpStatus,
    requestId,
    message: `${procedure}: the executor answered ${httpStatus} without a result${excerpt ? `: ${excerpt}` : ""}`,
  });
}
