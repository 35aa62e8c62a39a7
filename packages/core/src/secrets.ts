/**
 * Masks the values of a tool's `secretFields` in what the read API shows (issue 10). The record
 * keeps the real arguments (a resend needs them); what leaves the service for any role but admin
 * shows a secret as {@link maskSecret} does: at its path in the arguments and the identity, and
 * wherever the value appears in any other part (a result, a compensation, an error message, an
 * event, an effect's description).
 */
import { leaves, underField, wholeValuePattern } from "./redact.ts";
import type { AnyTool } from "./tool.ts";

/** What stands in for a secret (followed by its last 4 characters when long enough). */
export const SECRET_MASK = "***";

/** Secrets at least this long show their last 4 characters (a card number: `***1111`). */
export const SECRET_LAST4_FROM_CHARS = 12;

/** Deepest nesting walked; deeper values are replaced whole. */
const MAX_DEPTH = 32;

/**
 * The masked form of a secret value: `***` and its last 4 characters when it has at least
 * {@link SECRET_LAST4_FROM_CHARS} (`4111111111111111` → `***1111`), `***` otherwise and for
 * anything that is not a string or a number (an object under a secret path is masked whole).
 */
export function maskSecret(value: unknown): string {
  const text = typeof value === "string" ? value : typeof value === "number" ? String(value) : "";
  return text.length >= SECRET_LAST4_FROM_CHARS ? `${SECRET_MASK}${text.slice(-4)}` : SECRET_MASK;
}

/** Masks one call's secrets in anything shown about it. */
export interface SecretMasker {
  /** True when the tool declares secret fields and the call holds at least one value under them. */
  readonly active: boolean;
  /** The arguments with each secret path masked, and secret values elsewhere in them too. */
  args<T>(args: T): T;
  /** Canonical identity fields (`{ field: value }`): a secret field's value masked. */
  identity<T>(identity: T): T;
  /** Any JSON value with every secret value in it masked (inside strings too, whole values only). */
  value<T>(value: T): T;
  /** A text with every secret value (raw, URL-, form- or JSON-encoded) replaced by its masked form. */
  text(text: string): string;
}

const identityMasker: SecretMasker = {
  active: false,
  args: (a) => a,
  identity: (i) => i,
  value: (v) => v,
  text: (t) => t,
};

/**
 * The masker of one call.
 * @param tool - its `secretFields` (dot paths); no tool or no secret fields: nothing is masked.
 * @param args - the call's stored (unmasked) arguments; more argument sets (an audit entry's before
 *   and after) may be given to mask their secret values too.
 */
export function secretMasker(
  tool: Pick<AnyTool, "secretFields"> | undefined,
  args: unknown,
  ...moreArgs: unknown[]
): SecretMasker {
  const fields = tool?.secretFields ?? [];
  if (fields.length === 0) return identityMasker;
  const secrets = new Set<string>();
  for (const a of [args, ...moreArgs]) {
    const found: [string, string][] = [];
    leaves(a, "", found);
    for (const [path, value] of found) if (value !== "" && fields.some((f) => underField(path, f))) secrets.add(value);
  }
  if (secrets.size === 0) return identityMasker;
  // Longest first, so a secret inside a longer one does not break it up.
  const patterns = [...secrets]
    .sort((a, b) => b.length - a.length)
    .map((s) => [wholeValuePattern(s), maskSecret(s)] as const);
  const text = (t: string) => {
    let out = t;
    for (const [pattern, masked] of patterns) out = out.replace(pattern, masked);
    return out;
  };
  const value = <T>(v: T, depth = 0): T => {
    if (typeof v === "string") return text(v) as T;
    if (typeof v === "number") return (secrets.has(String(v)) ? maskSecret(v) : v) as T;
    if (v === null || typeof v !== "object") return v;
    if (depth > MAX_DEPTH) return SECRET_MASK as T;
    if (Array.isArray(v)) return v.map((x) => value(x, depth + 1)) as T;
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [text(k), value(x, depth + 1)])) as T;
  };
  const maskPath = (node: unknown, parts: string[]): unknown => {
    if (node === null || typeof node !== "object") return node;
    const [head, ...rest] = parts as [string, ...string[]];
    if (!Object.hasOwn(node, head)) return node;
    const child = (node as Record<string, unknown>)[head];
    const next = rest.length === 0 ? (child === null ? null : maskSecret(child)) : maskPath(child, rest);
    if (Array.isArray(node)) return node.map((x, i) => (String(i) === head ? next : x));
    return { ...(node as Record<string, unknown>), [head]: next };
  };
  return {
    active: true,
    args: <T>(a: T): T => {
      let out: unknown = a;
      for (const f of fields) out = maskPath(out, f.split("."));
      return value(out) as T;
    },
    identity: <T>(i: T): T => {
      if (i === null || typeof i !== "object") return value(i);
      const entries = Object.entries(i).map(([k, v]) => [k, fields.some((f) => underField(k, f)) ? maskSecret(v) : v]);
      return value(Object.fromEntries(entries)) as T;
    },
    value: (v) => value(v),
    text,
  };
}
