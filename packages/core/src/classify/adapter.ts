/**
 * The contract between the shared classification logic (engine.ts) and one client library's
 * knowledge (one file per library beside this one, listed in index.ts). Types only, plus the small
 * field readers every adapter needs.
 */
import type { ReasonCode } from "../statuses.ts";

/**
 * What `classifyError` (index.ts) concluded about one error.
 * - `outcome`: `FAILED_NO_EFFECT` only when the request provably never reached the remote (or the
 *   remote refused before doing work); `UNKNOWN` otherwise.
 * - `code`: the closed reason code for envelopes and intent records.
 * - `message`: one human-readable line naming the error and the cause codes found.
 * - `httpStatus`: the remote's HTTP status, when the error carries one.
 * - `retryAfterMs`: the remote's `Retry-After`, in ms, when the error carries one.
 */
export interface Classification {
  outcome: "FAILED_NO_EFFECT" | "UNKNOWN";
  code: ReasonCode;
  message: string;
  httpStatus?: number;
  retryAfterMs?: number;
}

/**
 * What an adapter's {@link ClientErrorAdapter.classify} says about one link of an error chain:
 * - `not_sent`: the link proves the request never left the client (`code` names the proof);
 * - `ambiguous`: the request may have been delivered; `code` is the reason code, `label` names the
 *   evidence in messages.
 */
export type ShapeVerdict = { kind: "not_sent"; code: string } | { kind: "ambiguous"; code: ReasonCode; label: string };

/**
 * The verdict of one link of an error chain (engine.ts `judgeLink`): a {@link ShapeVerdict}, or
 * `typed` (a Tristate typed error, or an HTTP status the link carries, already classified), or
 * `opaque` (the link says nothing either way, e.g. `TypeError: fetch failed` around its cause).
 */
export type LinkVerdict = { kind: "typed"; classification: Classification } | ShapeVerdict | { kind: "opaque" };

/** An error link that is an object: adapters read its fields (`code`, `name`, `response`, …) by shape. */
export type ErrorRecord = Record<PropertyKey, unknown>;

/**
 * One client library's knowledge of its own errors. Supporting another client is one file exporting
 * one of these plus one line in index.ts's `CLIENT_ADAPTERS`.
 *
 * Adapters recognise errors by **shape**, never by `instanceof`: the error may come from another
 * copy of the library, or be a link deep in a `cause` chain. Every member is optional; the engine
 * asks them in this order over each link of the chain, and the first answer wins:
 * 1. {@link httpStatus} — the remote answered with a status (then `classifyHttpStatus` decides);
 * 2. {@link notSentCodes} / {@link ambiguousCodes} — the link's string `code`, looked up in the
 *    union of every adapter's tables (a code is claimed by one adapter only);
 * 3. {@link classify} — the link's other fields (name, message), when its code is absent or unknown;
 * then an unrecognised string `code` is UNKNOWN `AMBIGUOUS`, and a link without one is opaque.
 * Separately, {@link retries} is asked of every link: a client that already retried makes any
 * FAILED_NO_EFFECT verdict UNKNOWN (DESIGN.md rule 11).
 *
 * The rule everywhere (DESIGN.md "Error mapping"): **when unsure, UNKNOWN** — claim a code as
 * not-sent only when the library can raise it solely before the first request byte is written.
 */
export interface ClientErrorAdapter {
  /** The library, for docs and tests (`"axios"`, `"undici / fetch"`, …). */
  readonly name: string;
  /** String `code`s proving the request never left the client → FAILED_NO_EFFECT `NOT_SENT`. */
  readonly notSentCodes?: readonly string[];
  /** String `code`s meaning the request may have been delivered, with the reason code each maps to. */
  readonly ambiguousCodes?: Readonly<Record<string, ReasonCode>>;
  /** The HTTP status an error of this library carries when the remote answered, else undefined. */
  httpStatus?(link: ErrorRecord): number | undefined;
  /** A verdict from the link's shape other than its code (name, message), else undefined. */
  classify?(link: ErrorRecord): ShapeVerdict | undefined;
  /** One clause saying the client already retried (`"axios-retry retried 2 time(s)"`), else undefined. */
  retries?(link: ErrorRecord): string | undefined;
}

/** Whether `value` is a non-null object (an error link adapters can read). */
export function isObject(value: unknown): value is ErrorRecord {
  return typeof value === "object" && value !== null;
}

/** `value[key]` when it is a string, else undefined (classify-invoke.ts shares it). */
export function stringField(value: unknown, key: string): string | undefined {
  if (!isObject(value)) return undefined;
  const field = value[key];
  return typeof field === "string" ? field : undefined;
}

/** Whether `value` is a finite number greater than `above` (a retry count or an attempt count). */
export function countAbove(value: unknown, above: number): value is number {
  return typeof value === "number" && Number.isFinite(value) && value > above;
}

/**
 * The integer HTTP status of a client's `response` object: `response.status` (axios, fetch's
 * `Response` in ky), else `response.statusCode` (Node's `IncomingMessage` in got); undefined when
 * `response` is no object or carries no integer status.
 */
export function responseStatus(response: unknown): number | undefined {
  if (!isObject(response)) return undefined;
  const status = response.status ?? response.statusCode;
  return typeof status === "number" && Number.isInteger(status) ? status : undefined;
}
