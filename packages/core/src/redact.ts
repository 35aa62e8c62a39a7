/**
 * Keeps argument values out of stored text (issue 9 §8): error messages written on intent records
 * and events never contain an argument value the tool does not mark loggable — raw, percent-encoded
 * (a URL path built from `{email}`) or form-encoded (a query value). Such values are replaced by
 * `{field}`, naming the argument.
 */
import { readPath } from "./idempotency-key.ts";
import type { AnyTool } from "./tool.ts";

/** Shorter values are left alone: they carry no personal data and would garble the text. */
const MIN_REDACTED_CHARS = 3;

function leaves(value: unknown, path: string, out: [string, string][], depth = 0): void {
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
 * Replaces every non-loggable argument value found in `text` by `{field}` (case-insensitive; also
 * its `encodeURIComponent` and `application/x-www-form-urlencoded` forms).
 * @param tool - its `loggableFields` (dot paths) are kept; every other leaf of `args` is redacted.
 * @param args - the call's arguments (persisted JSON or schema-parsed).
 * @param text - the message to clean.
 * @returns the cleaned text (the same string when nothing matched). Never throws.
 */
export function redactArgs(tool: Pick<AnyTool, "loggableFields"> | undefined, args: unknown, text: string): string {
  if (!text) return text;
  const found: [string, string][] = [];
  leaves(args, "", found);
  const loggable = new Set(tool?.loggableFields ?? []);
  const secrets: [string, string][] = [];
  for (const [path, value] of found) {
    if (loggable.has(path) || [...loggable].some((f) => path.startsWith(`${f}.`))) continue;
    if (value.length < MIN_REDACTED_CHARS) continue;
    // A value that equals a loggable field's value is public anyway.
    if ([...loggable].some((f) => String(readPath(args, f)) === value)) continue;
    for (const form of new Set([
      value,
      encodeURIComponent(value),
      new URLSearchParams({ v: value }).toString().slice(2),
    ])) {
      secrets.push([path, form]);
    }
  }
  secrets.sort((a, b) => b[1].length - a[1].length);
  let out = text;
  for (const [path, form] of secrets) {
    if (!out.toLowerCase().includes(form.toLowerCase())) continue;
    out = out.replace(new RegExp(escapeRegExp(form), "gi"), `{${path}}`);
  }
  return out;
}
