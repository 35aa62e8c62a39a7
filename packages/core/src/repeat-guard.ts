/**
 * A client that retries on its own never yields "exactly once" (issue 21 §2; DESIGN.md rule 11).
 * undici's retry interceptor, axios-retry, got, ky, the OpenAI, Anthropic and Stripe SDKs and the
 * AWS SDK v3 resend a POST that was already written (its answer was a 503, or a reset): for a tool
 * whose remote does not dedupe a key, that is a second effect. The invoke tracker (invoke-tracker.ts)
 * sees each request of an invoke; this file holds what it keeps per request ({@link RequestAttempt}),
 * how it recognises a repeat (same method and target as a request of the same invoke that was
 * written, or may still be), the refusal it fails a repeat with before its head is written, and
 * the summary of an invoke's attempts ({@link RepeatSummary}) that classification reads.
 *
 * What counts as a repeat: a request whose method is not safe (anything but GET, HEAD, OPTIONS,
 * TRACE; RFC 9110 §9.2.1) to the same origin, path and query, with the same method, as an earlier
 * request of the same invoke that was written and ended without an answer (a reset, a timeout),
 * or was answered with a status clients retry on (`isRetriedStatus`). Not repeats: a request after
 * one that was provably never written (a refused connection: retrying it is fine); after one
 * answered 2xx, 3xx or another 4xx (a GraphQL or JSON-RPC endpoint takes a query, then a mutation,
 * on one URL); beside one still in flight with no answer yet (an MCP `notifications/cancelled`
 * for a `tools/call`: a client retries only once an attempt has failed); to another target
 * (create, then confirm).
 */

/** HTTP methods that are safe (RFC 9110 §9.2.1): a repeat of one cannot add an effect. */
const SAFE_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS", "TRACE"]);

/**
 * Answers that retrying clients resend on (undici's retry interceptor: 500, 502, 503, 504, 429;
 * the OpenAI/Anthropic SDKs: 408, 409, 429, ≥ 500; Stripe: 409, ≥ 500; the AWS SDK: 429, 5xx;
 * got/ky: 408, 413, 429, 5xx; RFC 9110 425 Too Early): 408, 409, 413, 425, 429 and every 5xx.
 */
function isRetriedStatus(status: number): boolean {
  return status >= 500 || RETRIED_STATUSES.has(status);
}

/** The 4xx answers of {@link isRetriedStatus}. */
const RETRIED_STATUSES: ReadonlySet<number> = new Set([408, 409, 413, 425, 429]);

/** What the tracker knows of one request of an invoke (internal to the tracker and this file). */
export interface RequestAttempt {
  /** Upper-case method (`POST`). */
  readonly method: string;
  /** Origin, path and query (`http://127.0.0.1:4000/refunds?x=1`): what a retry sends again. */
  readonly target: string;
  /** The head was written (undici `sendHeaders`/`headers`; node:http: its socket connected). */
  written: boolean;
  /** The request ended (answered, failed or closed). */
  settled: boolean;
  /** The remote's HTTP status, when an answer head arrived. */
  status?: number;
  /** Refused by the guard before its head was written. */
  refused: boolean;
  /** A repeat of an earlier request of the invoke when it started ({@link isRepeat}), refused or not. */
  repeat: boolean;
}

/** The method and target of an undici `Request` or a node:http `ClientRequest`, else undefined. */
export function requestTarget(request: object, undici: boolean): { method: string; target: string } | undefined {
  const r = request as Record<string, unknown>;
  const method = typeof r.method === "string" ? r.method.toUpperCase() : undefined;
  const path = typeof r.path === "string" ? r.path : undefined;
  if (method === undefined || path === undefined) return undefined;
  if (undici) return r.origin === undefined ? undefined : { method, target: `${String(r.origin)}${path}` };
  const getHeader = (r as { getHeader?: (name: string) => unknown }).getHeader;
  const hostHeader = typeof getHeader === "function" ? getHeader.call(request, "host") : undefined;
  const host = typeof hostHeader === "string" ? hostHeader : typeof r.host === "string" ? r.host : "";
  const protocol = typeof r.protocol === "string" ? r.protocol : "http:";
  return { method, target: `${protocol}//${host}${path}` };
}

/** The HTTP status of an answer head in a channel message (`{ response: { statusCode } }`), else undefined. */
export function answerStatus(message: unknown): number | undefined {
  const response = (message as { response?: { statusCode?: unknown } } | null)?.response;
  return typeof response?.statusCode === "number" ? response.statusCode : undefined;
}

/**
 * Whether a node:http request can still be failed before its head is written: its socket is not
 * there yet or still connecting (Node queued the head on it; nothing reaches the wire before the
 * TCP connection exists). On a connected (reused keep-alive) socket the head is already written.
 */
export function headNotYetOnWire(request: object): boolean {
  const socket = (request as { socket?: unknown }).socket;
  if (typeof socket !== "object" || socket === null) return true;
  return (socket as { connecting?: unknown }).connecting === true;
}

/**
 * True when `next` repeats a request among `earlier` (see the header): same method (not a safe one)
 * and target as one not itself refused that was written and failed without an answer, or was
 * answered with a status clients retry on.
 */
export function isRepeat(earlier: readonly RequestAttempt[], next: { method: string; target: string }): boolean {
  if (SAFE_METHODS.has(next.method)) return false;
  return earlier.some(
    (a) =>
      !a.refused &&
      a.method === next.method &&
      a.target === next.target &&
      (a.status === undefined ? a.written && a.settled : isRetriedStatus(a.status)),
  );
}

/**
 * The error a refused repeat fails with, before its head is written. Its `code` is no Node or
 * library code, so no retry policy retries it as a network failure by name (undici's retry
 * interceptor, axios-retry, got); an SDK that retries every connection error tries again and is
 * refused again. The invoke's outcome is read from the tracker's {@link RepeatSummary}, never from
 * this error alone.
 */
export class RepeatRefusedError extends Error {
  /** Marks the error for logs and for the tracker's tests. */
  readonly code = "TRISTATE_REPEAT_REFUSED";

  constructor(method: string, target: string) {
    super(
      `Tristate refused a repeat of ${method} ${shown(target)} in the same invoke before its head was written: ` +
        "an earlier request to it was written, and the tool's remote does not dedupe a key (rule 11)",
    );
    this.name = "RepeatRefusedError";
  }
}

/** The target without its query (which may hold credentials or personal data), for messages. */
function shown(target: string): string {
  const q = target.indexOf("?");
  return q < 0 ? target : `${target.slice(0, q)}?…`;
}

/**
 * Repeats within one invoke, as classification reads them (classify-invoke.ts).
 * - `guarded`: the invoke refused repeats (its tool's remote does not dedupe a key); when false the
 *   summary is informative only.
 * - `written`: requests written beyond the first to one (method, target) — each a possible extra effect.
 * - `refused`: repeats refused before their head was written.
 * - `refusedTargetStatus`: the HTTP status the written request of a refused repeat's target
 *   answered (the last such answer), when one arrived.
 * - `evidence`: every attempt to a repeated target, one clause each, for the record and a person.
 */
export interface RepeatSummary {
  guarded: boolean;
  written: number;
  refused: number;
  refusedTargetStatus?: number;
  evidence: string;
}

function describeAttempt(a: RequestAttempt, n: number): string {
  if (a.refused) return `#${n} refused before its head was written`;
  const answer = a.status === undefined ? "no answer" : `answered ${a.status}`;
  return `#${n} ${a.written ? "written" : a.settled ? "not written" : "may have been written"}, ${answer}`;
}

/** Summarises the attempts of one invoke (see {@link RepeatSummary}). */
export function summariseRepeats(attempts: readonly RequestAttempt[], guarded: boolean): RepeatSummary {
  const groups = new Map<string, RequestAttempt[]>();
  for (const a of attempts) {
    const key = `${a.method} ${a.target}`;
    groups.set(key, [...(groups.get(key) ?? []), a]);
  }
  const summary: RepeatSummary = { guarded, written: 0, refused: 0, evidence: "" };
  const clauses: string[] = [];
  for (const group of groups.values()) {
    if (!group.some((a) => a.repeat)) continue;
    const sent = group.filter((a) => !a.refused && (a.written || !a.settled));
    const refused = group.filter((a) => a.refused).length;
    summary.written += sent.filter((a) => a.repeat).length;
    summary.refused += refused;
    const answered = sent.filter((a) => a.status !== undefined).at(-1)?.status;
    if (refused > 0 && answered !== undefined) summary.refusedTargetStatus = answered;
    const first = group[0] as RequestAttempt;
    clauses.push(
      `${first.method} ${shown(first.target)}: ${group.map((a, i) => describeAttempt(a, i + 1)).join("; ")}`,
    );
  }
  summary.evidence = clauses.join(" | ");
  return summary;
}
