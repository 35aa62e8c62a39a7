/**
 * HTTP status semantics for "could the request have been delivered?" (RFC 9110 §15; DESIGN.md
 * "Error mapping"), and `Retry-After` (RFC 9110 §10.2.3).
 */
import type { ReasonCode } from "./statuses.ts";

/** Options of {@link classifyError} and {@link classifyHttpStatus}. */
export interface ClassifyOptions {
  /**
   * Extra HTTP statuses the remote documents as "refused before any work" (per-tool override, e.g.
   * field case T05 declares 408 and 429). They classify as rejected (FAILED_NO_EFFECT). 2xx statuses
   * listed here are ignored.
   */
  noEffectStatuses?: readonly number[];
}
/**
 * Verdict of {@link classifyHttpStatus}.
 * - `ok`: 2xx (not 207), the remote did the work.
 * - `rejected`: the remote refused before doing work → FAILED_NO_EFFECT (code `REJECTED`).
 * - `ambiguous`: the work may have happened → UNKNOWN (code `IN_FLIGHT`, `GATEWAY_5XX`, `PARTIAL_EFFECT`
 *   for 207, or `AMBIGUOUS`).
 * `reason` is one line explaining the verdict, with its source.
 */
export type HttpStatusVerdict =
  | { kind: "ok"; reason: string }
  | { kind: "rejected"; code: "REJECTED"; reason: string }
  | { kind: "ambiguous"; code: ReasonCode; reason: string };

/**
 * Classifies an HTTP response status: did the remote do the work, refuse before doing it, or can we
 * not tell?
 *
 * Defaults (DESIGN.md "Error mapping"):
 * - 2xx → `ok` (RFC 9110 §15.3), except 207 Multi-Status → `ambiguous` `PARTIAL_EFFECT`: its body
 *   carries one status per item (RFC 4918 §13), so it is never a plain success; a caller that reads
 *   the items itself asks for that explicitly (`callHttp`'s `multiStatus: "read"`).
 * - 4xx → `rejected`: the client error class means the server did not act on the request
 *   (RFC 9110 §15.5) — 400, 401, 403, 404, 405, 410, 413, 415, 422, 429 (RFC 6585 §4) and others;
 *   except:
 *   - 408 Request Timeout → `ambiguous` `AMBIGUOUS`: the server closed a connection it did not
 *     finish reading (RFC 9110 §15.5.9), but intermediaries also emit it after forwarding;
 *   - 409 Conflict → `ambiguous` `IN_FLIGHT`: the IETF "The Idempotency-Key HTTP Header Field"
 *     draft (draft-ietf-httpapi-idempotency-key-header, §2.7) answers 409 when a request with the
 *     same key is still being processed; the original may yet complete.
 * - 5xx → `ambiguous` (RFC 9110 §15.6: the server failed, possibly after acting): 502, 503 and 504
 *   get `GATEWAY_5XX` (a proxy may have forwarded the request; field case T05: "a 504 means work had
 *   started"), others `AMBIGUOUS`.
 * - 1xx and 3xx (redirects are not followed; a 303 after a POST means the work was done) →
 *   `ambiguous` `AMBIGUOUS`.
 *
 * Per-tool override: `options.noEffectStatuses` adds statuses the remote documents as "refused
 * before work" (field case T05 declares 408 and 429); they become `rejected`.
 * @param status the HTTP status code (100–599).
 * @param options per-tool overrides.
 */
export function classifyHttpStatus(status: number, options: ClassifyOptions = {}): HttpStatusVerdict {
  if (status === 207) {
    return {
      kind: "ambiguous",
      code: "PARTIAL_EFFECT",
      reason: "HTTP 207: multi-status; each item has its own status, some may have taken effect (RFC 4918 §13)",
    };
  }
  if (status >= 200 && status <= 299) return { kind: "ok", reason: `HTTP ${status}: success (RFC 9110 §15.3)` };
  if (options.noEffectStatuses?.includes(status)) {
    return {
      kind: "rejected",
      code: "REJECTED",
      reason: `HTTP ${status}: declared by the tool as refused before work (noEffectStatuses)`,
    };
  }
  if (status === 408) {
    return {
      kind: "ambiguous",
      code: "AMBIGUOUS",
      reason: "HTTP 408: request timeout; an intermediary may have forwarded the request (RFC 9110 §15.5.9)",
    };
  }
  if (status === 409) {
    return {
      kind: "ambiguous",
      code: "IN_FLIGHT",
      reason:
        "HTTP 409: a request with this idempotency key is still in progress (draft-ietf-httpapi-idempotency-key-header)",
    };
  }
  if (status >= 400 && status <= 499) {
    return {
      kind: "rejected",
      code: "REJECTED",
      reason: `HTTP ${status}: client error, not acted on (RFC 9110 §15.5)`,
    };
  }
  if (status === 502 || status === 503 || status === 504) {
    return {
      kind: "ambiguous",
      code: "GATEWAY_5XX",
      reason: `HTTP ${status}: gateway or server failure; the origin may have started the work (RFC 9110 §15.6)`,
    };
  }
  if (status >= 500 && status <= 599) {
    return {
      kind: "ambiguous",
      code: "AMBIGUOUS",
      reason: `HTTP ${status}: server error, possibly after acting (RFC 9110 §15.6)`,
    };
  }
  return {
    kind: "ambiguous",
    code: "AMBIGUOUS",
    reason: `HTTP ${status}: not a final success; redirects are not followed (RFC 9110 §15)`,
  };
}

/**
 * Parses a `Retry-After` header (RFC 9110 §10.2.3): either delay-seconds or an HTTP-date.
 * @param value the header value, or undefined.
 * @param nowEpochMs the current time, epoch ms (for the HTTP-date form).
 * @returns the delay in ms (never negative), or undefined when absent or malformed.
 */
export function parseRetryAfterMs(value: string | undefined, nowEpochMs: number = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  if (!/[a-z]/i.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowEpochMs);
}
