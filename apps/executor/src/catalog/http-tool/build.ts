/**
 * `httpTool`: a validated declaration turned into a `defineTool` tool whose `invoke` calls the remote
 * through `callHttp`, reads 2xx answers with the `answers` rules, and whose probes GET the probe URLs.
 * Every error it throws is redacted: argument values outside `loggableFields` never reach its text.
 */
import {
  type AnyTool,
  type Canonicaliser,
  callHttp,
  defineTool,
  type HttpCallContext,
  type InvokeContext,
  isToolDefinitionError,
  type ProbeContext,
  readPath,
} from "@tristate/core";
import { CatalogError } from "../catalog-error.ts";
import { refuseSendWhenTimeGone } from "../send-check.ts";
import { assertDone } from "./answers.ts";
import { argsSchema } from "./arguments.ts";
import { type HostPolicy, nonPublicRange } from "./host-policy.ts";
import { type ProbeSpec, runProbe } from "./probes.ts";
import { redactionFor } from "./redaction.ts";
import { canonicaliserFor, type HttpToolDeclaration, type ParsedDeclaration } from "./schema.ts";
import { fill, fillUrl } from "./url-template.ts";
import { validateDeclaration } from "./validate.ts";

type Args = Record<string, unknown>;

/** What a catalog imposes on all its declarative tools. */
export interface HttpToolOptions {
  /** The catalog's `httpAllowHosts`, when it has one: checked at load time and before every request. */
  hosts?: HostPolicy | undefined;
}

/**
 * Turns a declaration into a tool (validating it first).
 * @param index the declaration's position in its catalog, to name a tool without a valid name.
 * @throws CatalogError naming the tool and the field when the declaration is invalid, or names a
 *   host the catalog's `httpAllowHosts` refuses whatever it resolves to.
 */
export function httpTool(raw: HttpToolDeclaration | unknown, index = 0, options: HttpToolOptions = {}): AnyTool {
  const { declaration: d, args, segmentFields } = validateDeclaration(raw, index);
  const { hosts } = options;
  if (hosts) {
    checkHost(d.name, "url", d.url, hosts);
    if (d.keyProbe) checkHost(d.name, "keyProbe.url", d.keyProbe.url, hosts);
    if (d.identityProbe) checkHost(d.name, "identityProbe.url", d.identityProbe.url, hosts);
  }
  const loggable: ReadonlySet<string> = new Set(d.loggableFields ?? []);
  const identity = Object.fromEntries(
    Object.entries(d.identity).map(([f, c]) => [f, canonicaliserFor(c) as Canonicaliser]),
  );
  const probe = (label: string, p: NonNullable<ParsedDeclaration["keyProbe"]>): ProbeSpec => ({
    label,
    url: p.url,
    found: p.found,
    state: p.state,
    headers: d.headers,
    loggable,
    secret: d.secretFields ?? [],
    hosts,
  });
  const keyProbe = d.keyProbe ? probe("key probe", d.keyProbe) : undefined;
  const identityProbe = d.identityProbe ? probe("identity probe", d.identityProbe) : undefined;
  const { compensation, describe } = d;
  try {
    return defineTool<Args, unknown>({
      name: d.name,
      kind: d.kind,
      ...(d.description !== undefined ? { description: d.description } : {}),
      args: argsSchema(args, segmentFields),
      identity,
      timeoutMs: d.timeoutMs,
      ...(d.keyRetentionMs !== undefined ? { keyRetentionMs: d.keyRetentionMs } : {}),
      ...(d.irreversible !== undefined ? { irreversible: d.irreversible } : {}),
      ...(d.resendWhenAbsent !== undefined ? { resendWhenAbsent: d.resendWhenAbsent } : {}),
      ...(d.settleMs !== undefined ? { settleMs: d.settleMs } : {}),
      ...(d.loggableFields !== undefined ? { loggableFields: d.loggableFields } : {}),
      ...(d.secretFields !== undefined ? { secretFields: d.secretFields } : {}),
      ...(describe ? { describe: (a: Args) => fill(describe, (n) => a[n], false) } : {}),
      invoke: (a, ctx) => invoke(d, loggable, hosts, a, ctx),
      ...(keyProbe
        ? { probe: (a: Args, ctx: ProbeContext) => runProbe(keyProbe, a, ctx, { name: "key", value: ctx.clientRef }) }
        : {}),
      ...(identityProbe
        ? {
            probeByIdentity: (a: Args, ctx: ProbeContext) =>
              runProbe(identityProbe, a, ctx, { name: "since", value: String(ctx.sinceEpochMs) }),
          }
        : {}),
      ...(compensation
        ? {
            compensation: {
              tool: compensation.tool,
              args: (original: Args, result: unknown) =>
                Object.fromEntries(
                  Object.entries(compensation.args).map(([f, v]) => [f, compensationValue(v, original, result)]),
                ),
            },
          }
        : {}),
    });
  } catch (error) {
    if (isToolDefinitionError(error)) throw new CatalogError(d.name, error.field, error.rule, { cause: error });
    throw error;
  }
}

/**
 * One call of the declared request. A 207 is read (`multiStatus: "read"`) and judged by the answers
 * rules with every other 2xx.
 * @returns the answer's JSON (or text) body, or `{ status }` when it has none.
 * @throws what `callHttp` throws, and RejectedError / AmbiguousError `PARTIAL_EFFECT` for answers that
 *   mean "no effect" / "partial" (see `assertDone`); all redacted (see `redactionFor`).
 */
async function invoke(
  d: ParsedDeclaration,
  loggable: ReadonlySet<string>,
  hosts: HostPolicy | undefined,
  a: Args,
  ctx: InvokeContext,
) {
  const filled = fillUrl(
    d.url,
    (n) => (n === "key" ? ctx.idempotencyKey : a[n]),
    (n) => n !== "key" && !loggable.has(n),
    `${d.name}: ${d.method}`,
  );
  await hosts?.check(filled.url, `${d.name}: ${d.method} ${filled.shown}`, ctx.signal);
  // The host check may have waited (a DNS look-up): nothing is sent once the call's time is gone.
  refuseSendWhenTimeGone(ctx, `${d.name}: ${d.method} ${filled.shown}`);
  const redaction = redactionFor(a, loggable, [filled], d.secretFields);
  const header = d.idempotencyHeader;
  const standardHeader = header === undefined || (header !== null && header.toLowerCase() === "idempotency-key");
  const callCtx: HttpCallContext = {
    signal: ctx.signal,
    timeoutMs: ctx.timeoutMs,
    deadline: ctx.deadline,
    ...(standardHeader ? { idempotencyKey: ctx.idempotencyKey } : {}),
  };
  const headers: Record<string, string> = { ...d.headers };
  if (header && !standardHeader) headers[header] = ctx.idempotencyKey;
  const body =
    d.method === "GET" || d.body === "none"
      ? undefined
      : { ...a, ...(d.clientRefField ? { [d.clientRefField]: ctx.idempotencyKey } : {}) };
  try {
    const res = await callHttp(callCtx, {
      method: d.method,
      url: filled.url,
      headers,
      ...(hosts?.dispatcher(filled.url) ? { dispatcher: hosts.dispatcher(filled.url) } : {}),
      multiStatus: "read",
      ...(body !== undefined ? { body } : {}),
      ...(d.noEffectStatuses ? { noEffectStatuses: d.noEffectStatuses } : {}),
    });
    assertDone(d.answers ?? [], res.status, res.body, `${d.name}: ${d.method} ${filled.shown}`);
    return res.body ?? { status: res.status };
  } catch (error) {
    throw redaction.error(error);
  }
}

/**
 * Load-time check of a URL template's host (fixed by the catalog) against `httpAllowHosts`: not
 * listed, or an IP address only a wildcard lists that is not public.
 * @throws CatalogError naming the tool and `field`.
 */
function checkHost(tool: string, field: string, template: string, hosts: HostPolicy): void {
  const host = new URL(fill(template, () => "x", true)).hostname;
  const how = hosts.match(host);
  const listed = `(httpAllowHosts: ${hosts.entries.map((e) => JSON.stringify(e)).join(", ") || "none"})`;
  if (how === null)
    throw new CatalogError(tool, field, `host ${JSON.stringify(host)} is not in httpAllowHosts ${listed}`);
  const range = how === "wildcard" ? nonPublicRange(host) : null;
  if (range !== null && range !== "unparsable") {
    throw new CatalogError(
      tool,
      field,
      `host ${JSON.stringify(host)} is a ${range} address, which httpAllowHosts allows only when it lists it exactly ${listed}`,
    );
  }
}

/** A value of a compensation argument: a lone `{…}` keeps the value's type; mixed text is interpolated. */
function compensationValue(value: unknown, original: unknown, result: unknown): unknown {
  if (typeof value !== "string") return value;
  const lookup = (ref: string) => {
    const [scope, ...rest] = ref.split(".");
    return readPath(scope === "args" ? original : result, rest.join("."));
  };
  const lone = /^\{([^{}]*)\}$/.exec(value);
  if (lone) return lookup(lone[1] ?? "") ?? null;
  return fill(value, lookup, false);
}
