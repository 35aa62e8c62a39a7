import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import { CanonicalisationError, type Canonicaliser } from "./canon.ts";
import { DEFAULT_TENANT } from "./tenant.ts";

/**
 * The idempotency key of one effect: the first 32 hex characters of the SHA-256 of the canonical
 * JSON of `{run, step, tool, id: identity}` (keys sorted, no spaces; RFC 8785 via `canonicalize`,
 * which equals Python's `json.dumps(sort_keys=True, separators=(",", ":"))` for string values).
 * Source: the source design's `idempotency_key`. Example: run `run-7`, step `step-3`, tool
 * `issue_refund`, identity `{order_id: "A-1182", amount: "49.90"}` → `a6c763d983f2bfeb6708a2a2494a12de`.
 * A tenant other than `default` is part of the hashed object (`{tenant, run, step, tool, id}`), so
 * two tenants' identical run/step ids give different keys, also at the remote (issue 10); the
 * `default` tenant keeps the source design's derivation and its example key.
 * @param identity the canonical identity (see {@link canonicalIdentity}).
 * @param tenant the tenant of the call; default {@link DEFAULT_TENANT}.
 * @throws TypeError when an id is not a string.
 */
export function idempotencyKey(
  runId: string,
  stepId: string,
  tool: string,
  identity: Record<string, string>,
  tenant: string = DEFAULT_TENANT,
): string {
  for (const [name, v] of [
    ["runId", runId],
    ["stepId", stepId],
    ["tool", tool],
    ["tenant", tenant],
  ] as const) {
    if (typeof v !== "string") throw new TypeError(`idempotencyKey: ${name} must be a string`);
  }
  const fields = { run: runId, step: stepId, tool, id: identity };
  const blob = canonicalize(tenant === DEFAULT_TENANT ? fields : { tenant, ...fields });
  if (blob === undefined) throw new TypeError("idempotencyKey: identity is not serialisable");
  return createHash("sha256").update(blob, "utf8").digest("hex").slice(0, 32);
}

/**
 * The key a new attempt of a record sends on the wire after a definite rejection that the remote
 * may have cached under the previous key (a 402 decline replayed by Stripe-style key stores;
 * DESIGN.md rule 3): SHA-256 of `<record key>:attempt:<n>`, 32 lower-case hex characters. The record
 * keeps `key` as its identity; this one only travels.
 * @param key - the record's idempotency key.
 * @param attempt - the new attempt's number (≥ 2).
 */
export function attemptKey(key: string, attempt: number): string {
  return createHash("sha256").update(`${key}:attempt:${attempt}`, "utf8").digest("hex").slice(0, 32);
}

/** Reads a dot path (`amount.value`) from an object; undefined when any step is missing. */
export function readPath(source: unknown, path: string): unknown {
  let cur: unknown = source;
  for (const part of path.split(".")) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

/**
 * Picks and canonicalises the declared identity fields from the arguments. Each canonical string is
 * Unicode-normalised to NFC (the built-in canonicalisers already start with it; a custom one may not).
 * @returns `{ field: canonical string }` for each declared field (dot paths kept as names).
 * @throws CanonicalisationError naming a field that is missing or cannot be canonicalised.
 */
export function canonicalIdentity(args: unknown, spec: Record<string, Canonicaliser>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [field, canonicalise] of Object.entries(spec)) {
    const value = readPath(args, field);
    if (value === undefined || value === null) throw new CanonicalisationError(field, "is required (identity field)");
    out[field] = canonicalise(value, field).normalize("NFC");
  }
  return out;
}
