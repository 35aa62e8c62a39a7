/**
 * Reading a successful-looking (2xx) answer with a declaration's `answers` rules: a remote may say
 * "nothing done" or "partly done" with a 200 or a 207 Multi-Status (RFC 4918 §11.1). A 207 that no
 * rule reads is a partial effect, never "done".
 */
import { AmbiguousError, RejectedError, readPath } from "@tristate/core";
import type { AnswerRule } from "./schema.ts";

/** HTTP 207 Multi-Status: parts of the request may have succeeded and others failed. */
export const MULTI_STATUS = 207;

/** What a 2xx answer means, and the rule (or default) that said so, e.g. `answers.0 (status 207; …)`. */
export interface AnswerVerdict {
  means: AnswerRule["means"];
  /** The matching rule described, or why the default applied. */
  why: string;
}

/**
 * Reads a 2xx answer with the rules, first match wins. A rule matches when each condition it gives
 * holds: `status` (one of), `path`/`equals` (the value at the dot path, null when missing, `===` one
 * of the values), `every` (the array is non-empty and each item's `field` equals), `some` (at least
 * one item's `field` equals). No match: a 207 is `partial`, any other 2xx `done`.
 */
export function judgeAnswer(rules: readonly AnswerRule[], status: number, body: unknown): AnswerVerdict {
  for (const [i, rule] of rules.entries()) {
    if (matches(rule, status, body)) return { means: rule.means, why: `answers.${i} (${describeRule(rule)})` };
  }
  return status === MULTI_STATUS
    ? { means: "partial", why: "207 Multi-Status and no answers rule matched" }
    : { means: "done", why: "no answers rule matched" };
}

/**
 * Throws unless a 2xx answer means "done".
 * @param where the request as it may be shown, e.g. `POST https://crm.example/users/{email}/optout`.
 * @throws RejectedError (code `REJECTED`, with `httpStatus` and the body) for `no_effect`: FAILED_NO_EFFECT.
 * @throws AmbiguousError (code `PARTIAL_EFFECT`, with `httpStatus`) for `partial`: UNKNOWN.
 */
export function assertDone(rules: readonly AnswerRule[], status: number, body: unknown, where: string): void {
  const verdict = judgeAnswer(rules, status, body);
  const message = `${where} → HTTP ${status}: ${verdict.why}`;
  if (verdict.means === "no_effect") {
    throw new RejectedError(`${message}: the remote did nothing`, { code: "REJECTED", httpStatus: status, body });
  }
  if (verdict.means === "partial") {
    throw new AmbiguousError(`${message}: part of the request may have taken effect`, {
      code: "PARTIAL_EFFECT",
      httpStatus: status,
    });
  }
}

type Expected = AnswerRule["equals"];

function matches(rule: AnswerRule, status: number, body: unknown): boolean {
  if (rule.status !== undefined && !listOf(rule.status).includes(status)) return false;
  if (rule.path !== undefined && !equalsOne(readPath(body, rule.path), rule.equals)) return false;
  if (rule.every) {
    const items = itemsAt(body, rule.every.path);
    if (!items || items.length === 0) return false;
    const { field, equals } = rule.every;
    if (!items.every((item) => equalsOne(readPath(item, field), equals))) return false;
  }
  if (rule.some) {
    const items = itemsAt(body, rule.some.path);
    const { field, equals } = rule.some;
    if (!items?.some((item) => equalsOne(readPath(item, field), equals))) return false;
  }
  return true;
}

function itemsAt(body: unknown, path: string | undefined): unknown[] | null {
  const value = path === undefined ? body : readPath(body, path);
  return Array.isArray(value) ? value : null;
}

function equalsOne(value: unknown, expected: Expected): boolean {
  return listOf(expected ?? null).includes((value ?? null) as string);
}

function listOf<T>(value: T | T[]): T[] {
  return Array.isArray(value) ? value : [value];
}

/** A rule in one line, e.g. `status 207; every results.*.status = "failed"`. */
function describeRule(rule: AnswerRule): string {
  const values = (e: Expected) =>
    listOf(e ?? null)
      .map((v) => JSON.stringify(v))
      .join(" or ");
  const parts: string[] = [];
  if (rule.status !== undefined) parts.push(`status ${listOf(rule.status).join(" or ")}`);
  if (rule.path !== undefined) parts.push(`${rule.path} = ${values(rule.equals)}`);
  const items = (t: NonNullable<AnswerRule["every"]>) =>
    `${t.path ? `${t.path}.` : ""}*.${t.field} = ${values(t.equals)}`;
  if (rule.every) parts.push(`every ${items(rule.every)}`);
  if (rule.some) parts.push(`some ${items(rule.some)}`);
  return parts.join("; ");
}
