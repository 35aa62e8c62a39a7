import canonicalize from "canonicalize";
import type { AnyTool } from "./tool.ts";

/**
 * What a confirmation token confirms: one call — tenant, run, step, tool and idempotency key (which
 * binds the canonical identity) — and the canonical form of every top-level argument shown to the
 * person who confirmed it, not only the identity fields (issue 20 §2: a payout confirmed to account
 * …0001 is not confirmed to …9999).
 */
export interface ConfirmationSubject {
  /** The call's tenant. */
  readonly tenant: string;
  readonly runId: string;
  readonly stepId: string;
  /** The tool's catalog name. */
  readonly tool: string;
  /** The call's idempotency key. */
  readonly idempotencyKey: string;
  /** Each top-level argument's canonical form, by name ({@link canonicalArguments}). */
  readonly args: Readonly<Record<string, string>>;
}

/** The name standing for the whole arguments when they are not an object (a tool whose schema parses to a scalar). */
const WHOLE_ARGS_FIELD = "args";

/** A JSON-able copy: BigInts (a `z.coerce.bigint()` field) as tagged strings, so canonical JSON takes them. */
function jsonable(value: unknown, depth = 0): unknown {
  if (typeof value === "bigint") return { $bigint: value.toString() };
  if (depth > 64 || typeof value !== "object" || value === null) return value;
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return value; // Date: its ISO string
  if (Array.isArray(value)) return value.map((v) => jsonable(v, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, jsonable(v, depth + 1)]));
}

/** Canonical JSON (RFC 8785, via `canonicalize`) of one schema-parsed value: key order and number form do not count. */
function canonicalJson(value: unknown): string {
  try {
    return canonicalize(jsonable(value)) ?? "undefined";
  } catch (error) {
    // Cycles, NaN or a lone surrogate: arguments no call could store; keep them distinct and unequal to any JSON.
    return `unserialisable:${error instanceof Error ? error.message : String(error)}`;
  }
}

/**
 * The canonical form of each top-level argument of a call, by name: a field the tool declares as an
 * identity field by its own canonicaliser (`5000`, `"5000.0"` and `"5000.00"` are one amount under
 * `canon.decimal(2)`), every other field as canonical JSON of its schema-parsed value (RFC 8785: key
 * order and number formatting do not matter, any value change does). Fields whose value is
 * `undefined` are absent (as in JSON).
 * @param tool - the tool (its `identity` canonicalisers).
 * @param parsedArgs - the arguments after the tool's schema (defaults filled, coercions done).
 * @throws CanonicalisationError from an identity canonicaliser (the key derivation throws it first).
 */
export function canonicalArguments(tool: Pick<AnyTool, "identity">, parsedArgs: unknown): Record<string, string> {
  if (typeof parsedArgs !== "object" || parsedArgs === null || Array.isArray(parsedArgs)) {
    return { [WHOLE_ARGS_FIELD]: canonicalJson(parsedArgs) };
  }
  // No prototype: an argument named `__proto__` (a tool without a schema) is bound like any other.
  const out: Record<string, string> = Object.create(null);
  for (const [name, value] of Object.entries(parsedArgs)) {
    if (value === undefined) continue;
    const canonicalise = Object.hasOwn(tool.identity, name) ? tool.identity[name] : undefined;
    out[name] = canonicalise ? `id:${canonicalise(value, name)}` : canonicalJson(value);
  }
  return out;
}

/**
 * The subject of a confirmation of one call.
 * @param call - tenant, run, step, tool name and idempotency key of the call.
 * @param tool - the tool, for its identity canonicalisers.
 * @param parsedArgs - the schema-parsed arguments.
 * @throws CanonicalisationError from an identity canonicaliser.
 */
export function confirmationSubject(
  call: Omit<ConfirmationSubject, "args">,
  tool: Pick<AnyTool, "identity">,
  parsedArgs: unknown,
): ConfirmationSubject {
  return { ...call, args: canonicalArguments(tool, parsedArgs) };
}
