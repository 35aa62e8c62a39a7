/**
 * `mcpTool`: a validated upstream MCP tool declaration turned into a `defineTool` tool whose `invoke`
 * sends `tools/call` to the upstream server (the idempotency key under `keyField`) and whose probes
 * are other tools of the same server. Errors are redacted: argument values outside `loggableFields`
 * never reach their text.
 */

import { type CallToolResult, CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  type AnyTool,
  type Canonicaliser,
  type Deadline,
  defineTool,
  type InvokeContext,
  isToolDefinitionError,
  type ProbeContext,
  readPath,
} from "@tristate/core";
import { CatalogError } from "../catalog-error.ts";
import { answerFromState } from "../declaration/probe-state.ts";
import { canonicaliserFor } from "../declaration/schema.ts";
import { argsSchema } from "../http-tool/arguments.ts";
import { redactionFor } from "../http-tool/redaction.ts";
import { fill } from "../http-tool/url-template.ts";
import { refuseSendWhenTimeGone } from "../send-check.ts";
import { errorResultFailure, firstText, upstreamFailure } from "./outcomes.ts";
import type { McpFoundRule, McpProbeSpec, ParsedMcpDeclaration } from "./schema.ts";
import { serverLabel, transportOf, type UpstreamPool } from "./upstream.ts";
import { validateMcpDeclaration } from "./validate.ts";

type Args = Record<string, unknown>;

/** The pool each upstream MCP tool calls through, for {@link closeMcpUpstreams}. */
const pools = new WeakMap<AnyTool, UpstreamPool>();

/**
 * Turns an `mcpTools` declaration into a tool (validating it first).
 * @param index the declaration's position in its catalog, to name a tool without a valid name.
 * @param pool the connections of the catalog's upstream servers (shared by its tools).
 * @throws CatalogError naming the tool and the field when the declaration is invalid.
 */
export function mcpTool(raw: unknown, index: number, pool: UpstreamPool): AnyTool {
  const { declaration: d, args } = validateMcpDeclaration(raw, index);
  const loggable: ReadonlySet<string> = new Set(d.loggableFields ?? []);
  const secret = d.secretFields ?? [];
  const identity = Object.fromEntries(
    Object.entries(d.identity).map(([f, c]) => [f, canonicaliserFor(c) as Canonicaliser]),
  );
  const upstreamName = d.tool ?? d.name;
  const where = `MCP tool ${upstreamName} at ${serverLabel(d.server)}`;
  const { describe, keyProbe, identityProbe } = d;
  let tool: AnyTool;
  try {
    tool = defineTool<Args, unknown>({
      name: d.name,
      kind: d.kind,
      ...(d.description !== undefined ? { description: d.description } : {}),
      args: argsSchema(args),
      identity,
      timeoutMs: d.timeoutMs,
      ...(d.keyRetentionMs !== undefined ? { keyRetentionMs: d.keyRetentionMs } : {}),
      ...(d.irreversible !== undefined ? { irreversible: d.irreversible } : {}),
      ...(d.resendWhenAbsent !== undefined ? { resendWhenAbsent: d.resendWhenAbsent } : {}),
      ...(d.settleMs !== undefined ? { settleMs: d.settleMs } : {}),
      ...(d.loggableFields !== undefined ? { loggableFields: d.loggableFields } : {}),
      ...(d.secretFields !== undefined ? { secretFields: d.secretFields } : {}),
      ...(describe ? { describe: (a: Args) => fill(describe, (n) => a[n], false) } : {}),
      invoke: async (a: Args, ctx: InvokeContext) => {
        const sent = { ...a, ...(d.keyField ? { [d.keyField]: ctx.idempotencyKey } : {}) };
        const redaction = redactionFor(a, loggable, [], secret);
        try {
          return await callUpstream(pool, d, upstreamName, sent, ctx.signal, ctx.timeoutMs, where, ctx.deadline);
        } catch (error) {
          throw redaction.error(error);
        }
      },
      ...(keyProbe
        ? { probe: (a: Args, ctx: ProbeContext) => runProbe(pool, d, keyProbe, "key probe", a, ctx, ctx.clientRef) }
        : {}),
      ...(identityProbe
        ? {
            probeByIdentity: (a: Args, ctx: ProbeContext) =>
              runProbe(pool, d, identityProbe, "identity probe", a, ctx, ctx.sinceEpochMs),
          }
        : {}),
    });
  } catch (error) {
    if (isToolDefinitionError(error)) throw new CatalogError(d.name, error.field, error.rule, { cause: error });
    throw error;
  }
  pools.set(tool, pool);
  return tool;
}

/**
 * Closes the upstream connections of the MCP tools among `tools` (stdio servers' processes end).
 * Safe to call for a catalog without MCP tools, and twice.
 */
export async function closeMcpUpstreams(tools: readonly AnyTool[]): Promise<void> {
  const distinct = new Set(tools.map((t) => pools.get(t)).filter((p): p is UpstreamPool => p !== undefined));
  await Promise.all([...distinct].map((p) => p.close()));
}

/**
 * One `tools/call` of the upstream tool.
 * @returns its `structuredContent`, else its text parsed as JSON, else `{ content }`.
 * @param deadline the call's turn deadline (absent for probes, bounded by `signal` alone).
 * @throws NotSentError when no connection could be made, or (`DEADLINE_EXCEEDED`) when the call's
 *   time was gone once the session was ready; RejectedError / AmbiguousError per
 *   outcomes.ts for JSON-RPC errors, HTTP statuses and `isError` results.
 */
async function callUpstream(
  pool: UpstreamPool,
  d: ParsedMcpDeclaration,
  name: string,
  args: Args,
  signal: AbortSignal,
  timeoutMs: number,
  where: string,
  deadline?: Deadline,
): Promise<unknown> {
  const client = await pool.client(d.server, signal);
  // Connecting and initialising the session may have waited: nothing is sent once the call's time is gone.
  refuseSendWhenTimeGone({ signal, deadline }, where);
  let result: CallToolResult;
  try {
    result = (await client.request({ method: "tools/call", params: { name, arguments: args } }, CallToolResultSchema, {
      signal,
      timeout: timeoutMs,
    })) as CallToolResult;
  } catch (error) {
    if (isTransportBroken(error)) pool.drop(d.server, client);
    throw upstreamFailure(error, where, transportOf(d.server), signal.aborted);
  }
  if (result.isError) throw errorResultFailure(result, where, d.errorResults);
  return resultValue(result);
}

/** A failure after which the connection is not to be reused (closed, or an HTTP-level refusal such as an expired session). */
function isTransportBroken(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === -32000 || (typeof code === "number" && code >= 400) || !(error instanceof Error && "code" in error);
}

/** The value of a successful result: `structuredContent`, else the text as JSON, else the text, else `{ content }`. */
function resultValue(result: CallToolResult): unknown {
  if (result.structuredContent !== undefined) return result.structuredContent;
  const text = firstText(result);
  if (text) {
    try {
      return JSON.parse(text);
    } catch {
      return { text };
    }
  }
  return { content: result.content ?? [] };
}

/**
 * Runs one probe: calls the probe tool on the same server and reads its result with the "found" rule.
 * @param special the value of `{key}` (key probe) or `{since}` (identity probe, epoch ms).
 * @returns null when absent; when found, the core's answer read with the probe's `state` (the item,
 *   `refusedUnderKey` or `foundStateUnknown`: `../declaration/probe-state.ts`).
 * @throws Error when the probe failed or its answer is no evidence (the record stays UNKNOWN).
 */
async function runProbe(
  pool: UpstreamPool,
  d: ParsedMcpDeclaration,
  probe: McpProbeSpec,
  label: string,
  a: Args,
  ctx: ProbeContext,
  special: string | number,
): Promise<unknown> {
  const values = (ref: string) =>
    ref === "key" || ref === "since" ? special : readPath(a, ref.replace(/^args\./, ""));
  const probeArgs = Object.fromEntries(
    Object.entries(probe.args).map(([field, v]) => {
      if (typeof v !== "string") return [field, v];
      const lone = /^\{([^{}]*)\}$/.exec(v);
      return [field, lone ? (values(lone[1] ?? "") ?? null) : fill(v, values, false)];
    }),
  );
  const where = `${label} ${probe.tool} at ${serverLabel(d.server)}`;
  const redaction = redactionFor(a, new Set(d.loggableFields ?? []), [], d.secretFields ?? []);
  let value: unknown;
  try {
    value = await callUpstream(
      pool,
      { ...d, errorResults: "unknown" },
      probe.tool,
      probeArgs,
      ctx.signal,
      ctx.timeoutMs,
      where,
    );
  } catch (error) {
    throw redaction.error(error);
  }
  const answer = readFound(probe.found, value);
  if (answer.kind === "no_evidence") throw new Error(redaction.text(`${where}: ${answer.why}`));
  if (answer.evidence === null) return null;
  return answerFromState(probe.state, answer.items ?? [answer.evidence], label);
}

/**
 * A probe's result read with its rule: the evidence (null: absent; `items`: every item of a
 * non-empty array, whose states are all read), or why it is no evidence.
 */
type Answer = { kind: "evidence"; evidence: unknown; items?: unknown[] } | { kind: "no_evidence"; why: string };

function readFound(rule: McpFoundRule, body: unknown): Answer {
  const evidence = (e: unknown): Answer => ({ kind: "evidence", evidence: e });
  switch (rule.type) {
    case "non_empty_array": {
      const list = rule.path ? readPath(body, rule.path) : body;
      if (!Array.isArray(list)) {
        return { kind: "no_evidence", why: `the result${rule.path ? ` at ${rule.path}` : ""} is not an array` };
      }
      if (list.length === 0) return evidence(null);
      return { kind: "evidence", evidence: list[0] ?? { found: true }, items: list.map((i) => i ?? { found: true }) };
    }
    case "not_null": {
      const value = rule.path ? readPath(body, rule.path) : body;
      return evidence(value === undefined || value === null ? null : value);
    }
    case "json_path_equals": {
      const value = readPath(body, rule.path) ?? null;
      if (rule.values.includes(value as string)) return evidence(body ?? { [rule.path]: value });
      if (!rule.absentValues || rule.absentValues.includes(value as string)) return evidence(null);
      return {
        kind: "no_evidence",
        why: `the result has ${rule.path} = ${JSON.stringify(value)}, neither a "found" nor an "absent" value`,
      };
    }
  }
}
