import type { ZodType } from "zod";
import type { Canonicaliser } from "./canon.ts";
import type { Deadline } from "./deadline.ts";
import { ToolDefinitionError } from "./definition-errors.ts";
import { TOOL_KINDS, type ToolKind } from "./statuses.ts";
import { defaultResendWhenAbsent, toolKindPolicy } from "./tool-kind-policy.ts";

/** Default key retention (ms) when a tool declares none: 24 h, Stripe's documented retention. */
export const DEFAULT_KEY_RETENTION_MS = 24 * 60 * 60 * 1000;

/** What `invoke` receives besides the arguments. */
export interface InvokeContext {
  /** The executor-derived idempotency key; send it as `Idempotency-Key` (callHttp does). */
  idempotencyKey: string;
  /** Aborts when the per-call timeout elapses; pass it to the transport. */
  signal: AbortSignal;
  /** The per-call timeout in ms (already capped by the deadline). */
  timeoutMs: number;
  /** The turn's deadline; forward `deadline.epochMs` to the remote if it accepts one. */
  deadline: Deadline;
  /** Attempt number, 1-based. Never part of the key. */
  attempt: number;
}

/** What `probe` and `probeByIdentity` receive besides the persisted original arguments. */
export interface ProbeContext {
  /** The idempotency key, used as the client reference the call carried. */
  clientRef: string;
  /** Aborts when the probe's timeout elapses. */
  signal: AbortSignal;
  /** The probe's timeout in ms. */
  timeoutMs: number;
  /** Epoch ms the intent was created: an identity probe counts only effects since then. */
  sinceEpochMs: number;
}

/** What identifies an effect at the remote (see {@link ToolSpec.effectRef}); absent fields are unknown. */
export interface EffectRef {
  /** The idempotency key or client reference the effect was made with. */
  key?: string | null;
  /** The remote's id of the effect (a refund id, a reservation id). */
  remoteId?: string | null;
}

/**
 * How to undo a confirmed effect (saga step). Stored on the intent record before the call (issue 4
 * completes the abort flow).
 */
export interface CompensationSpec<A, R> {
  /** Name of the compensating tool. */
  tool: string;
  /** Arguments of the compensating call from the original arguments and the confirmed result. */
  args(original: A, result: R | undefined): Record<string, unknown>;
}

/** The declaration passed to {@link defineTool}. `A`: parsed arguments; `R`: the tool's result. */
export interface ToolSpec<A = Record<string, unknown>, R = unknown> {
  /** Unique tool name, e.g. `issue_refund` (letters, digits, `_`, `.`, `-`; at most 128). */
  name: string;
  /**
   * `read_only` (no effect, no record), `idempotent_by_key` (the remote dedupes by
   * `Idempotency-Key`) or `unsafe` (no key support: resent on absence only with `settleMs`).
   */
  kind: ToolKind;
  /** What the tool does, for a model's tool list. */
  description?: string;
  /** Argument schema (zod). Arguments that fail it never reach the remote. */
  args?: ZodType<A>;
  /**
   * Identity fields (dot paths into the arguments) with their canonicalisers. Only these feed the
   * idempotency key: free text such as a `reason` must not. Required unless `kind` is `read_only`.
   */
  identity?: Record<string, Canonicaliser>;
  /** The tool's own timeout per call, ms (at most 24 h). `invoke` must honour `ctx.signal`. */
  timeoutMs: number;
  /** How long the remote remembers idempotency keys, ms. Default 24 h. */
  keyRetentionMs?: number;
  /** One phrase naming the effect, e.g. `refund of 49.90 EUR on order A-1182`. */
  describe?(args: A): string;
  /** Performs the call. Throw `NotSentError` / `RejectedError` / `AmbiguousError`; anything else is UNKNOWN. */
  invoke(args: A, ctx: InvokeContext): Promise<R>;
  /**
   * Key probe: finds the effect by idempotency key / client reference, or returns null. What it
   * found must be the effect, done or in progress (rule 5a): an item found in a failed or declined
   * state is `refusedUnderKey(detail, status?, item)` (no effect), and one whose state tells nothing
   * is `foundStateUnknown(item, why)` (never settled SUCCEEDED from it).
   */
  probe?(args: A, ctx: ProbeContext): Promise<unknown>;
  /**
   * Identity probe: finds an effect matching the business identity created since the intent, or null
   * (`foundStateUnknown` as for `probe`; a refusal here counts as absent).
   */
  probeByIdentity?(args: A, ctx: ProbeContext): Promise<unknown>;
  /**
   * What identifies an effect a probe found (rule 5g): the idempotency key / client reference it
   * carries (`key`) and the remote's own id for it (`remoteId`). With it, an identity probe's match
   * that carries another key, or whose remote id another record already holds, is never taken as
   * this record's effect. Without it, a match is this record's only when no other record of the tool
   * with the same identity could own it; otherwise the record goes to the human queue.
   */
  effectRef?(found: unknown): EffectRef | null;
  /** How to undo the effect; registered with the intent before the call. */
  compensation?: CompensationSpec<A, R>;
  /** True for effects that cannot be undone (a sent email); put them last in a plan. Never compensated. */
  irreversible?: boolean;
  /**
   * For an irreversible tool: the corrective action an abort runs instead of a compensation (e.g. a
   * correction e-mail). Without one, an abort puts the confirmed effect in the human queue.
   */
  corrective?: CompensationSpec<A, R>;
  /**
   * A confirmation policy on the arguments: return a reason (e.g. "refunds over 100.00 EUR need
   * confirmation") when this call needs a confirmation token from an operator or the end user, or
   * false when it does not. Without a valid token the call is refused (FAILED_NO_EFFECT,
   * `CONFIRMATION_REQUIRED`) and nothing is sent. Source: the source design's "require confirmation
   * for them when the stakes are high".
   */
  confirmation?(args: A): string | false;
  /**
   * Settle window, ms (at most 7 days): how long after a send the remote may still apply the effect or keep it
   * hidden from a probe (its lookup lag, its queue). A probe's "absent" proves absence only when the
   * probe ran at or after the end of the last send plus this window; for a send whose outcome was
   * never written (a crash) the window starts at the send's lease, which is also the
   * `Request-Deadline` forwarded to the remote (a remote that honours it starts no work after it).
   * Before that the record stays UNKNOWN (`ABSENCE_NOT_CONCLUSIVE`) and the sweeper re-probes once
   * absence can be conclusive. Source: DESIGN.md rule 5b.
   *
   * Required for an `unsafe` tool to be resent on absence: without it an `unsafe` call is never
   * resent (its record goes to the human queue). An `idempotent_by_key` tool within key retention
   * does not need it (the remote dedupes the resend); after key retention it gates the identity
   * probe's "absent" like an `unsafe` tool's.
   */
  settleMs?: number;
  /**
   * Whether conclusive absent probes justify a resend with the same key. Default: true for
   * `idempotent_by_key` (the remote dedupes a resend even if the original is still in flight), and
   * for an `unsafe` tool that declares `settleMs`; false otherwise (absence is no proof while a slow
   * original may still land; field cases T06, T21): such a record goes to the human queue.
   * `true` on an `unsafe` tool without `settleMs` is refused by {@link defineTool}.
   */
  resendWhenAbsent?: boolean;
  /** Argument fields whose values may appear in logs and spans (default: none). */
  loggableFields?: string[];
  /**
   * Argument fields holding secrets (dot paths into the arguments, e.g. `card_number` or
   * `payment.card.number`; a path covers everything under it). Default: none.
   *
   * The record keeps the real value (a resend needs it), but the read API masks it for every role
   * but `admin` (see `maskSecrets`): at its path in the arguments and in the identity, and wherever
   * the value appears in a result, compensation, error, event or audit snapshot (`***` followed by the
   * last 4 characters for a value of 12 characters or more, e.g. `***1111` for a card number; `***`
   * otherwise). Stored error messages never contain it (`{field}` stands in, see `redactArgs`), nor do
   * logs and spans. A secret field can never be loggable: {@link defineTool} refuses a path that is,
   * contains or lies under one of `loggableFields`.
   */
  secretFields?: string[];
}

/** A validated tool, as the executor holds it. */
export interface Tool<A = Record<string, unknown>, R = unknown> extends ToolSpec<A, R> {
  readonly identity: Record<string, Canonicaliser>;
  readonly keyRetentionMs: number;
  readonly resendWhenAbsent: boolean;
}

/** Any tool, whatever its argument and result types. */
// biome-ignore lint/suspicious/noExplicitAny: a heterogeneous catalog needs the widest type
export type AnyTool = Tool<any, any>;

const NAME_RULE = /^[A-Za-z0-9_.-]{1,128}$/;
/** Largest per-call timeout a tool may declare, ms (24 h): leases and settle times stay valid dates. */
const MAX_TIMEOUT_MS = 24 * 3600_000;
/** Largest settle window a tool may declare, ms (7 days). */
const MAX_SETTLE_MS = 7 * 24 * 3600_000;

function fail(tool: string, field: string, rule: string): never {
  throw new ToolDefinitionError({ tool, field, rule });
}

/** A dot path: non-empty segments separated by dots. */
function isDotPath(field: unknown): field is string {
  return typeof field === "string" && field !== "" && field.split(".").every((p) => p !== "");
}

/** True when one path is the other or lies under it. */
function overlaps(a: string, b: string): boolean {
  return a === b || a.startsWith(`${b}.`) || b.startsWith(`${a}.`);
}

/** `secretFields`: dot paths, none repeated, none overlapping a loggable field. */
function checkSecretFields(name: string, secret: unknown, loggable: unknown): void {
  if (loggable !== undefined && (!Array.isArray(loggable) || !loggable.every((f) => typeof f === "string"))) {
    fail(name, "loggableFields", "must be an array of argument field names (dot paths)");
  }
  if (secret === undefined) return;
  if (!Array.isArray(secret)) fail(name, "secretFields", "must be an array of argument field names (dot paths)");
  const seen = new Set<string>();
  for (const [i, field] of secret.entries()) {
    if (!isDotPath(field)) fail(name, `secretFields.${i}`, "must be a dot path (e.g. card_number or card.number)");
    if (seen.has(field)) fail(name, `secretFields.${i}`, `"${field}" is listed twice`);
    seen.add(field);
    const clash = ((loggable as string[] | undefined) ?? []).find((f) => overlaps(f, field));
    if (clash !== undefined) {
      fail(
        name,
        `secretFields.${i}`,
        `"${field}" is secret, so it can never be loggable, but loggableFields has "${clash}": remove one of them`,
      );
    }
  }
}

/**
 * Declares a tool. Validates the declaration and fills defaults.
 * @throws ToolDefinitionError (a TypeError) carrying the tool, the field and the rule when the
 *   declaration is invalid; its message is `defineTool("<tool>"): <field> <rule>`.
 */
export function defineTool<A = Record<string, unknown>, R = unknown>(spec: ToolSpec<A, R>): Tool<A, R> {
  const name = typeof spec?.name === "string" ? spec.name : "";
  if (!NAME_RULE.test(name)) fail(name, "name", "must match /^[A-Za-z0-9_.-]{1,128}$/");
  if (!(TOOL_KINDS as readonly string[]).includes(spec.kind))
    fail(name, "kind", `must be one of ${TOOL_KINDS.join(", ")}`);
  if (typeof spec.timeoutMs !== "number" || !Number.isFinite(spec.timeoutMs) || spec.timeoutMs <= 0) {
    fail(name, "timeoutMs", "must be a positive number of milliseconds");
  }
  if (spec.timeoutMs > MAX_TIMEOUT_MS) fail(name, "timeoutMs", `must be at most ${MAX_TIMEOUT_MS} ms (24 h)`);
  if (spec.keyRetentionMs !== undefined && !(Number.isFinite(spec.keyRetentionMs) && spec.keyRetentionMs > 0)) {
    fail(name, "keyRetentionMs", "must be a positive number of milliseconds");
  }
  if (spec.settleMs !== undefined && !(Number.isFinite(spec.settleMs) && spec.settleMs >= 0)) {
    fail(name, "settleMs", "must be a non-negative number of milliseconds");
  }
  if (spec.settleMs !== undefined && spec.settleMs > MAX_SETTLE_MS) {
    fail(
      name,
      "settleMs",
      `must be at most ${MAX_SETTLE_MS} ms (7 days); a remote that may take longer has no bound: omit it`,
    );
  }
  if (spec.resendWhenAbsent !== undefined && typeof spec.resendWhenAbsent !== "boolean") {
    fail(name, "resendWhenAbsent", "must be true or false");
  }
  const policy = toolKindPolicy(spec.kind);
  if (policy.remoteIgnoresKey && spec.resendWhenAbsent === true && spec.settleMs === undefined) {
    fail(
      name,
      "resendWhenAbsent",
      "needs settleMs on an unsafe tool (absence proves nothing while the original may still land; rule 5b, docs/rules.md)",
    );
  }
  if (typeof spec.invoke !== "function") fail(name, "invoke", "must be a function");
  for (const hook of ["probe", "probeByIdentity", "describe", "effectRef"] as const) {
    if (spec[hook] !== undefined && typeof spec[hook] !== "function") fail(name, hook, "must be a function");
  }
  const identity = spec.identity ?? {};
  for (const [field, canon] of Object.entries(identity)) {
    if (typeof canon !== "function") fail(name, `identity.${field}`, "must be a canonicaliser function (see canon)");
    if (field === "" || field.split(".").some((p) => p === "")) fail(name, `identity.${field}`, "must be a dot path");
  }
  checkSecretFields(name, spec.secretFields, spec.loggableFields);
  if (policy.hasEffect && Object.keys(identity).length === 0) {
    fail(name, "identity", "must declare at least one field for a side-effecting tool");
  }
  if (spec.compensation !== undefined && spec.irreversible) {
    fail(name, "compensation", "cannot be declared on an irreversible tool (declare a corrective instead)");
  }
  if (spec.corrective !== undefined) {
    if (!spec.irreversible) fail(name, "corrective", "is only for irreversible tools (declare a compensation instead)");
    if (typeof spec.corrective.tool !== "string" || !NAME_RULE.test(spec.corrective.tool)) {
      fail(name, "corrective.tool", "must name a tool");
    }
    if (typeof spec.corrective.args !== "function") fail(name, "corrective.args", "must be a function");
  }
  if (spec.confirmation !== undefined && typeof spec.confirmation !== "function") {
    fail(name, "confirmation", "must be a function of the arguments");
  }
  if (spec.compensation !== undefined) {
    if (typeof spec.compensation.tool !== "string" || !NAME_RULE.test(spec.compensation.tool)) {
      fail(name, "compensation.tool", "must name a tool");
    }
    if (typeof spec.compensation.args !== "function") fail(name, "compensation.args", "must be a function");
  }
  return {
    ...spec,
    identity,
    keyRetentionMs: spec.keyRetentionMs ?? DEFAULT_KEY_RETENTION_MS,
    resendWhenAbsent: spec.resendWhenAbsent ?? defaultResendWhenAbsent(spec.kind, spec.settleMs !== undefined),
  };
}
