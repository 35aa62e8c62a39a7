/**
 * The shared classification logic, library-agnostic: walk an error's `cause` chain, ask the client
 * adapters (adapter.ts) about each link, weigh the verdicts, and apply the retry rule. Per DESIGN.md
 * "Error mapping: could the request have been delivered?" and field case T09 ("fetch failed" hides
 * the real cause). The rule everywhere: **when unsure, UNKNOWN** — a wrong UNKNOWN costs one probe,
 * a wrong FAILED_NO_EFFECT costs a duplicate effect.
 *
 * Nothing here names a client library; index.ts binds these functions to its adapter registry.
 */
import { isAmbiguousError, isDeadlineExceededError, isNotSentError, isRejectedError } from "../errors.ts";
import { type ClassifyOptions, classifyHttpStatus } from "../http-status.ts";
import type { ReasonCode } from "../statuses.ts";
import {
  type Classification,
  type ClientErrorAdapter,
  type ErrorRecord,
  isObject,
  type LinkVerdict,
  stringField,
} from "./adapter.ts";

/** How deep {@link classifyWith} follows `cause` chains and `AggregateError.errors`. */
const MAX_LINKS = 32;

/**
 * The adapters of one registry with their code tables merged: what {@link judgeLinkWith} and
 * {@link classifyWith} consult. Build it with {@link createRegistry}.
 */
export interface AdapterRegistry {
  readonly adapters: readonly ClientErrorAdapter[];
  /** Every adapter's `notSentCodes`. */
  readonly notSentCodes: ReadonlySet<string>;
  /** Every adapter's `ambiguousCodes`. */
  readonly ambiguousCodes: ReadonlyMap<string, ReasonCode>;
}

/**
 * Merges the adapters' code tables, in registry order.
 * @throws Error when two adapters claim the same code (or one claims it both ways): a code has one
 *   meaning, owned by one library's file.
 */
export function createRegistry(adapters: readonly ClientErrorAdapter[]): AdapterRegistry {
  const notSentCodes = new Set<string>();
  const ambiguousCodes = new Map<string, ReasonCode>();
  const owner = new Map<string, string>();
  const claim = (code: string, adapter: ClientErrorAdapter) => {
    const previous = owner.get(code);
    if (previous !== undefined) throw new Error(`error code ${code} is claimed by ${previous} and ${adapter.name}`);
    owner.set(code, adapter.name);
  };
  for (const adapter of adapters) {
    for (const code of adapter.notSentCodes ?? []) {
      claim(code, adapter);
      notSentCodes.add(code);
    }
    for (const [code, reason] of Object.entries(adapter.ambiguousCodes ?? {})) {
      claim(code, adapter);
      ambiguousCodes.set(code, reason);
    }
  }
  return { adapters, notSentCodes, ambiguousCodes };
}

/** `Name: message` of an error-like value, for messages. */
export function describe(value: unknown): string {
  if (!isObject(value)) return String(value);
  const name = stringField(value, "name") ?? "Error";
  const message = stringField(value, "message");
  return message ? `${name}: ${message}` : name;
}

/** Collects the error, its `cause` chain and any `AggregateError.errors`, outermost first, without cycles. */
export function links(error: unknown): unknown[] {
  const seen = new Set<unknown>();
  const out: unknown[] = [];
  const queue: unknown[] = [error];
  while (queue.length > 0 && out.length < MAX_LINKS) {
    const link = queue.shift();
    if (link === undefined || link === null || seen.has(link)) continue;
    seen.add(link);
    out.push(link);
    if (isObject(link)) {
      if ("cause" in link) queue.push(link.cause);
      if (Array.isArray(link.errors)) queue.push(...link.errors);
    }
  }
  return out;
}

/** The classification of Tristate's own typed errors (from any copy of the package), else undefined. */
export function typedClassification(error: unknown): Classification | undefined {
  if (isNotSentError(error)) {
    return { outcome: "FAILED_NO_EFFECT", code: error.code, message: describe(error) };
  }
  if (isRejectedError(error)) {
    const c: Classification = { outcome: "FAILED_NO_EFFECT", code: error.code, message: describe(error) };
    if (error.httpStatus !== undefined) c.httpStatus = error.httpStatus;
    if (error.retryAfterMs !== undefined) c.retryAfterMs = error.retryAfterMs;
    return c;
  }
  if (isDeadlineExceededError(error)) {
    return { outcome: "FAILED_NO_EFFECT", code: "DEADLINE_EXCEEDED", message: describe(error) };
  }
  if (isAmbiguousError(error)) {
    const c: Classification = { outcome: "UNKNOWN", code: error.code, message: describe(error) };
    if (error.httpStatus !== undefined) c.httpStatus = error.httpStatus;
    if (error.retryAfterMs !== undefined) c.retryAfterMs = error.retryAfterMs;
    return c;
  }
  return undefined;
}

/** The first answer of `ask` over the adapters, in registry order. */
function firstAnswer<T>(
  adapters: readonly ClientErrorAdapter[],
  ask: (adapter: ClientErrorAdapter) => T | undefined,
): T | undefined {
  for (const adapter of adapters) {
    const answer = ask(adapter);
    if (answer !== undefined) return answer;
  }
  return undefined;
}

/** The classification of a link carrying the remote's HTTP `status` ({@link classifyHttpStatus}). */
function statusClassification(link: ErrorRecord, status: number, options: ClassifyOptions): Classification {
  const verdict = classifyHttpStatus(status, options);
  const message = describe(link);
  if (verdict.kind === "rejected")
    return { outcome: "FAILED_NO_EFFECT", code: verdict.code, message, httpStatus: status };
  if (verdict.kind === "ambiguous") return { outcome: "UNKNOWN", code: verdict.code, message, httpStatus: status };
  return { outcome: "UNKNOWN", code: "AMBIGUOUS", message, httpStatus: status };
}

/**
 * What one link of an error chain says about delivery, asking `registry` in the order documented
 * on `ClientErrorAdapter` (adapter.ts): Tristate's typed errors, then an HTTP status, then the
 * link's string `code` in the merged tables, then the adapters' shape rules, then an unrecognised
 * code → `ambiguous` `AMBIGUOUS`; a link with none of these is `opaque`.
 */
export function judgeLinkWith(registry: AdapterRegistry, link: unknown, options: ClassifyOptions): LinkVerdict {
  const typed = typedClassification(link);
  if (typed) return { kind: "typed", classification: typed };
  if (!isObject(link)) return { kind: "opaque" };

  const status = firstAnswer(registry.adapters, (adapter) => adapter.httpStatus?.(link));
  if (status !== undefined) return { kind: "typed", classification: statusClassification(link, status, options) };

  // `code` must be a string: DOMException's numeric legacy `code` (20 for AbortError) is no errno.
  const code = stringField(link, "code");
  if (code !== undefined) {
    if (registry.notSentCodes.has(code)) return { kind: "not_sent", code };
    const reason = registry.ambiguousCodes.get(code);
    if (reason) return { kind: "ambiguous", code: reason, label: code };
  }
  const shaped = firstAnswer(registry.adapters, (adapter) => adapter.classify?.(link));
  if (shaped) return shaped;
  if (code !== undefined) return { kind: "ambiguous", code: "AMBIGUOUS", label: code };
  return { kind: "opaque" };
}

/**
 * Classifies anything a tool's `invoke` threw against `registry` (see `classifyError` in index.ts
 * for the rules). A chain is NOT_SENT only if some link proves it and **no** link suggests delivery
 * or carries an unrecognised string `code`; then, if any link says its client already retried, a
 * FAILED_NO_EFFECT verdict becomes UNKNOWN `AMBIGUOUS` (keeping `httpStatus`). Never throws on a
 * well-behaved error; a retry field whose getter throws proves nothing.
 */
export function classifyWith(registry: AdapterRegistry, error: unknown, options: ClassifyOptions): Classification {
  const c = classifyShape(registry, error, options);
  if (c.outcome !== "FAILED_NO_EFFECT") return c;
  // Typed errors carry their own words (callHttp's NotSentError already holds its cause's).
  const where = c.code === "NOT_SENT" && !typedClassification(error) ? unreachedRemote(error) : undefined;
  const retried = retryEvidence(registry, error);
  if (retried === undefined) return where ? { ...c, message: `${c.message} — ${where}; nothing was sent` } : c;
  const unknown: Classification = {
    outcome: "UNKNOWN",
    code: "AMBIGUOUS",
    message: `${c.message}${where ? ` — ${where}` : ""}; ${retried}, so an earlier attempt may have been delivered`,
  };
  if (c.httpStatus !== undefined) unknown.httpStatus = c.httpStatus;
  return unknown;
}

/**
 * The remote a connection never reached, in words, from Node's system error fields along the chain:
 * `<address>:<port> refused the connection` (ECONNREFUSED), `the name <hostname> did not resolve`
 * (ENOTFOUND, EAI_AGAIN); undefined when no link says where.
 */
function unreachedRemote(error: unknown): string | undefined {
  for (const link of links(error)) {
    const code = stringField(link, "code");
    if (code === "ECONNREFUSED") {
      const address = stringField(link, "address");
      const port = isObject(link) && typeof link.port === "number" ? `:${link.port}` : "";
      if (address !== undefined)
        return `${address.includes(":") ? `[${address}]` : address}${port} refused the connection`;
    }
    const hostname = stringField(link, "hostname");
    if ((code === "ENOTFOUND" || code === "EAI_AGAIN") && hostname !== undefined) {
      return `the name ${hostname} did not resolve`;
    }
  }
  return undefined;
}

/** The first retry statement found along the error's links (adapters' `retries`); never throws. */
function retryEvidence(registry: AdapterRegistry, error: unknown): string | undefined {
  for (const link of links(error)) {
    if (!isObject(link)) continue;
    try {
      const retried = firstAnswer(registry.adapters, (adapter) => adapter.retries?.(link));
      if (retried !== undefined) return retried;
    } catch {
      // A throwing getter proves nothing either way; the other links may still tell.
    }
  }
  return undefined;
}

function classifyShape(registry: AdapterRegistry, error: unknown, options: ClassifyOptions): Classification {
  const top = typedClassification(error);
  if (top) return top;

  const verdicts = links(error).map((link) => ({ link, verdict: judgeLinkWith(registry, link, options) }));
  const message = describeChain(error, verdicts);

  // Outermost typed error or HTTP status wins, unless an outer link already suggests delivery.
  for (const { verdict } of verdicts) {
    if (verdict.kind === "ambiguous") return { outcome: "UNKNOWN", code: verdict.code, message };
    if (verdict.kind === "typed") {
      const c = verdict.classification;
      if (c.outcome === "FAILED_NO_EFFECT" && verdicts.some((v) => v.verdict.kind === "ambiguous")) {
        return { outcome: "UNKNOWN", code: "AMBIGUOUS", message };
      }
      return { ...c, message: `${message} (${c.message})` };
    }
  }
  if (verdicts.some((v) => v.verdict.kind === "not_sent")) {
    return { outcome: "FAILED_NO_EFFECT", code: "NOT_SENT", message };
  }
  return { outcome: "UNKNOWN", code: "AMBIGUOUS", message };
}

function describeChain(error: unknown, verdicts: { link: unknown; verdict: LinkVerdict }[]): string {
  const codes = verdicts
    .map(({ link }) => stringField(link, "code"))
    .filter((code): code is string => code !== undefined);
  const head = error === undefined || error === null ? `non-error value ${String(error)}` : describe(error);
  return codes.length > 0 ? `${head} [${[...new Set(codes)].join(", ")}]` : head;
}
