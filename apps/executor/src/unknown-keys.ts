/**
 * The message of an unknown key in a strict input: it names the key(s) and lists the keys the
 * object allows, read from the schema that refused them (zod 4 hands the refusing schema to error
 * maps as `issue.inst`). One text for every strict input of the executor — tRPC procedures, the
 * arguments of a tool call (tRPC and MCP), the catalog's declarations.
 */
import { type core, z } from "zod";

/**
 * The keys a strict object (or a record over an enum of keys) allows, in declaration order; null
 * when `schema` is neither.
 */
export function allowedKeysOf(schema: unknown): string[] | null {
  const def = (schema as { _zod?: { def?: { type?: string; shape?: object; keyType?: unknown } } } | null)?._zod?.def;
  if (def?.type === "object" && def.shape) return Object.keys(def.shape);
  const values = (def?.keyType as { _zod?: { values?: Set<unknown> } } | undefined)?._zod?.values;
  if (def?.type === "record" && values) return [...values].map(String);
  return null;
}

/** `a, b, c`, or `none` for an object that takes no keys. */
function listed(keys: readonly string[]): string {
  return keys.length ? keys.join(", ") : "none";
}

/**
 * Error map for zod's `unrecognized_keys`: `unknown key "resolution"; allowed keys: filters, cursor,
 * limit, tenant` (`unknown keys "a", "b"; …` for several). Other issues: undefined (zod's own text).
 */
export function unknownKeysError(issue: core.$ZodRawIssue): string | undefined {
  if (issue.code !== "unrecognized_keys") return undefined;
  const keys = issue.keys.map((k) => JSON.stringify(k)).join(", ");
  const allowed = allowedKeysOf(issue.inst);
  const head = `unknown key${issue.keys.length > 1 ? "s" : ""} ${keys}`;
  return allowed ? `${head}; allowed keys: ${listed(allowed)}` : head;
}

/**
 * Error map for a declaration whose error already names the key as its field (the catalog's
 * `timeout: unknown field`): `unknown field; allowed fields: name, kind, …`.
 */
export function unknownFieldError(issue: core.$ZodRawIssue): string | undefined {
  if (issue.code !== "unrecognized_keys") return undefined;
  const allowed = allowedKeysOf(issue.inst);
  return allowed ? `unknown field; allowed fields: ${listed(allowed)}` : "unknown field";
}

/**
 * Makes {@link unknownKeysError} zod's process-wide error map (a schema's or a parse's own map still
 * comes first). Idempotent; called where the executor's inputs are parsed (the tRPC layer, the MCP
 * gateway), so a tool call's arguments get the same text as a procedure's input.
 */
export function useUnknownKeysMessages(): void {
  z.config({ customError: unknownKeysError });
}
