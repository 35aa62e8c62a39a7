/** Turns zod issues into the `field: rule` pairs of a {@link CatalogError}. */
import type { z } from "zod";
import { CatalogError } from "../catalog-error.ts";

/**
 * Formats a zod issue as `[field, rule]`: the field is the dot path inside the declaration (with
 * `prefix` in front), the rule "is required" for a missing value and "unknown field; allowed fields: …"
 * for an extra key (parse with `{ error: unknownFieldError }`).
 * @param raw the value that was parsed, to tell a missing value from a wrong one.
 */
function issueParts(issue: z.core.$ZodIssue, raw: unknown, prefix: (string | number)[] = []): [string, string] {
  const path = [...prefix, ...issue.path.map((p) => (typeof p === "symbol" ? String(p) : p))];
  if (issue.code === "unrecognized_keys") {
    // The parse's error map (unknownFieldError) lists the allowed fields; zod's own text does not.
    const rule = issue.message.startsWith("unknown field") ? issue.message : "unknown field";
    return [[...path, issue.keys[0] ?? ""].join("."), rule];
  }
  if (issue.code === "invalid_type" && path.length > 0 && valueAt(raw, path.slice(prefix.length)) === undefined) {
    return [path.join("."), "is required"];
  }
  return [path.join(".") || "(declaration)", issue.message];
}

/**
 * The first issue of a failed parse as a {@link CatalogError} of `tool`.
 * @param raw the value that was parsed; `prefix` its place inside the declaration.
 */
export function catalogErrorOf(
  tool: string,
  error: z.ZodError,
  raw: unknown,
  prefix: (string | number)[] = [],
): CatalogError {
  const issue = error.issues[0];
  if (!issue) return new CatalogError(tool, prefix.join(".") || null, "is invalid");
  return new CatalogError(tool, ...issueParts(issue, raw, prefix));
}

function valueAt(raw: unknown, path: (string | number)[]): unknown {
  let cur = raw;
  for (const p of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<string | number, unknown>)[p];
  }
  return cur;
}
