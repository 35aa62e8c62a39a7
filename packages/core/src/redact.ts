/**
 * Keeps argument values out of stored text (issue 9 §8): error messages written on intent records
 * and events never contain an argument value the tool does not mark loggable — raw, percent-encoded
 * (a URL path built from `{email}`) or form-encoded (a query value). Such values are replaced by
 * `{field}`, naming the argument.
 */
import { readPath } from "./idempotency-key.ts";
import type { AnyTool } from "./tool.ts";

/** True when `path` is `field` or lies under it (`card.number` under `card`). */
export function underField(path: string, field: string): boolean {
  return path === field || path.startsWith(`${field}.`);
}

/** Shorter values are left alone: they carry no personal data and would garble the text. */
const MIN_REDACTED_CHARS = 3;

/** Every leaf of a JSON value as `[dot path, text]` (strings, finite numbers, dates). */
export function leaves(value: unknown, path: string, out: [string, string][], depth = 0): void {
  if (depth > 16) return;
  if (typeof value === "string") out.push([path, value]);
  else if (typeof value === "number" && Number.isFinite(value)) out.push([path, String(value)]);
  else if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) leaves(v, path ? `${path}.${i}` : String(i), out, depth + 1);
  } else if (typeof value === "object" && value !== null && !(value instanceof Date)) {
    for (const [k, v] of Object.entries(value)) leaves(v, path ? `${path}.${k}` : k, out, depth + 1);
  } else if (value instanceof Date && !Number.isNaN(value.getTime())) out.push([path, value.toISOString()]);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * A pattern matching `value` as a whole value (not inside a longer word or number), case-insensitive
 * and global, in its raw, `encodeURIComponent`, `encodeURI`, form-encoded and JSON-escaped forms.
 */
export function wholeValuePattern(value: string): RegExp {
  const forms = [
    ...new Set([
      value,
      encodeURIComponent(value),
      encodeURI(value),
      new URLSearchParams({ v: value }).toString().slice(2),
      JSON.stringify(value).slice(1, -1),
    ]),
  ].sort((a, b) => b.length - a.length);
  // Whole values only: "2000" is not redacted out of "HTTP 20000".
  const alternatives = forms.map(escapeRegExp).join("|");
  return new RegExp(`(?<![A-Za-z0-9])(?:${alternatives})(?![A-Za-z0-9])`, "gi");
}

/**
 * Replaces every non-loggable argument value found in `text` by `{field}` (case-insensitive; also
 * its `encodeURIComponent`, `encodeURI`, `application/x-www-form-urlencoded` and JSON-escaped
 * forms), whole values only (not inside a longer word or number).
 * @param tool - its `loggableFields` (dot paths) are kept; every other leaf of `args` is redacted.
 *   Values of its `secretFields` are redacted whatever their length, even when a loggable field
 *   holds the same value.
 * @param args - the call's arguments (persisted JSON or schema-parsed).
 * @param text - the message to clean.
 * @returns the cleaned text (the same string when nothing matched). Never throws.
 */
export function redactArgs(
  tool: Pick<AnyTool, "loggableFields" | "secretFields"> | undefined,
  args: unknown,
  text: string,
): string {
  if (!text) return text;
  const found: [string, string][] = [];
  leaves(args, "", found);
  const loggable = [...new Set(tool?.loggableFields ?? [])];
  const patterns: [string, RegExp][] = [];
  const secret = tool?.secretFields ?? [];
  for (const [path, value] of found) {
    if (value === "") continue;
    if (!secret.some((f) => underField(path, f))) {
      if (loggable.some((f) => underField(path, f))) continue;
      if (value.length < MIN_REDACTED_CHARS) continue;
      // A value that equals a loggable field's value is public anyway.
      if (loggable.some((f) => String(readPath(args, f)) === value)) continue;
    }
    patterns.push([path, wholeValuePattern(value)]);
  }
  // Longest values first, so a value inside a longer one does not break it up.
  patterns.sort((a, b) => b[1].source.length - a[1].source.length);
  let out = text;
  for (const [path, pattern] of patterns) out = out.replace(pattern, `{${path}}`);
  return out;
}

/**
 * Replaces only the values of the tool's `secretFields` found in `text` by `{field}` (every form, any
 * length; see {@link redactArgs}): for free text people write about a call, such as an operator's
 * note, where the other argument values (an order id) are the point of the text.
 * @returns the cleaned text (the same string when the tool has no secret fields). Never throws.
 */
export function redactSecrets(tool: Pick<AnyTool, "secretFields"> | undefined, args: unknown, text: string): string {
  const secret = tool?.secretFields ?? [];
  if (!text || secret.length === 0) return text;
  const found: [string, string][] = [];
  leaves(args, "", found);
  const patterns = found
    .filter(([path, value]) => value !== "" && secret.some((f) => underField(path, f)))
    .map(([path, value]) => [path, wholeValuePattern(value)] as const)
    .sort((a, b) => b[1].source.length - a[1].source.length);
  let out = text;
  for (const [path, pattern] of patterns) out = out.replace(pattern, `{${path}}`);
  return out;
}
