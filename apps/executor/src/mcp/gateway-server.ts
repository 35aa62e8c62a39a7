/**
 * Tristate as an MCP server: the catalog as MCP tools (name = catalog name, `inputSchema` = the
 * arguments' JSON Schema as `tools.list` gives it, `outputSchema` = the Envelope), each `tools/call`
 * run through the caller's tenant's executor and answered with the Envelope (envelope-result.ts).
 * Transport-neutral: http.ts serves it over Streamable HTTP, stdio.ts over stdio.
 */

import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import {
  type AnyTool,
  DEFAULT_RESERVE_MS,
  type Deadline,
  type Envelope,
  type Executor,
  findBadText,
  invalidArgs,
  refusalEnvelope,
  toolKindPolicy,
} from "@tristate/core";
import { isTransientDatabaseError } from "@tristate/db";
import { z } from "zod";
import { resolveDeadline } from "../api/calls/execute.ts";
import { isAppError } from "../app-error.ts";
import { type Arrival, NotInTimeError, within } from "../arrival.ts";
import type { Logger } from "../logger.ts";
import { useUnknownKeysMessages } from "../unknown-keys.ts";
import { type DefaultScope, defaultScopeRun } from "./default-scope.ts";
import { ENVELOPE_OUTPUT_SCHEMA, envelopeResult } from "./envelope-result.ts";
import { invalidParams } from "./protocol-error.ts";
import { META_CONFIRMATION, META_DEADLINE, MetaError, stepAndNamedRun } from "./run-step.ts";

/** The server's name and version in `initialize`. */
export const GATEWAY_INFO = { name: "tristate", version: "0.1.0" } as const;

/** What one MCP session's server needs. */
export interface GatewayOptions {
  /** The acting tenant's executor (the key's tenant). */
  executor: Executor;
  /**
   * The run of calls that name none in `_meta`: the API key's id and a time window (default-scope.ts),
   * never the session (rule 15).
   */
  defaultScope: DefaultScope;
  /** Now, epoch ms (the executor's clock). */
  now(): number;
  /**
   * When the request carrying the `tools/call` being served arrived (arrival.ts): its deadline's
   * default budget counts from there. Absent: now.
   */
  arrival?(): Arrival;
  /** `TRISTATE_MAX_BUDGET_MS` and `TRISTATE_DEFAULT_BUDGET_MS`, ms. */
  budget: { maxBudgetMs: number; defaultBudgetMs: number };
  logger: Logger;
  /** The key's name and tenant, for the log. */
  caller: { name: string; tenant: string };
  /**
   * Counts calls in flight (incremented when a call starts, decremented when it ends), for a graceful
   * stop and so that the session holding a call is never ended under it.
   */
  inFlight?: { count: number };
  /**
   * Checked before every `tools/call` (stdio: the key may have been revoked since start-up).
   * @throws ProtocolError (-32602) to refuse the call (nothing is sent).
   */
  authorize?(): Promise<void>;
}

/** The system-prompt rule sent as the server's `instructions` (clients may add it to the model's prompt). */
const INSTRUCTIONS =
  "Every tool answers an envelope with status SUCCEEDED, FAILED_NO_EFFECT or UNKNOWN and retry_safe. When retry_safe " +
  "is false, do not call the tool again for that step: report the status and the envelope's message. Calling the same " +
  "tool with the same identifying arguments again with this key (in any session, within the server's scope window) is " +
  "the same step (a replay, never a second effect); " +
  'to make a second, deliberate call with the same arguments, pass another _meta["io.tristate/stepId"].';

/** One catalog tool as an MCP tool. */
export function mcpToolOf(tool: AnyTool): Tool {
  const inputSchema = tool.args
    ? (z.toJSONSchema(tool.args, { unrepresentable: "any", io: "input" }) as Record<string, unknown>)
    : { type: "object" };
  return {
    name: tool.name,
    ...(tool.description ? { description: tool.description } : {}),
    inputSchema: inputSchema as Tool["inputSchema"],
    outputSchema: ENVELOPE_OUTPUT_SCHEMA as unknown as Tool["outputSchema"],
    annotations: {
      readOnlyHint: !toolKindPolicy(tool.kind).hasEffect,
      // A repeat with the same identity in the same run is replayed, never a second effect.
      idempotentHint: true,
      ...(tool.irreversible ? { destructiveHint: true } : {}),
    },
  };
}

/**
 * `tools/call` with any params, checked against `CallToolRequestSchema` first: a malformed request
 * (no `params`, `arguments: "x"`, no `name`) is -32602 invalid params with one line naming the field,
 * never the SDK's -32603 or its raw validation dump. The check throws a {@link ProtocolError}, which
 * the SDK answers as it is; the SDK's own check then finds the request well-formed.
 */
const LOOSE_CALL_TOOL_REQUEST = z
  .looseObject({ method: z.literal("tools/call"), params: z.unknown().optional() })
  .check((ctx) => {
    const checked = CallToolRequestSchema.safeParse(ctx.value);
    if (checked.success) return;
    const issue = checked.error.issues[0];
    const field = issue?.path.length ? issue.path.join(".") : "params";
    throw invalidParams(`tools/call: ${field}: ${issue?.message ?? "invalid"}`, { field });
  });

/**
 * Creates the MCP server of one session (connect it to one transport).
 * A client's cancellation (`notifications/cancelled`, e.g. after its -32001 timeout) does not stop
 * the call: it runs to its outcome in the intent log, where the client's repeat finds it.
 */
export function createGatewayServer(options: GatewayOptions): Server {
  const { executor, logger } = options;
  // A tool call's arguments with an unknown key: the envelope lists the allowed keys (unknown-keys.ts).
  useUnknownKeysMessages();
  const server = new Server(GATEWAY_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [...executor.tools.values()].map(mcpToolOf) }));
  // Registered with a loose schema: the SDK's protocol layer would turn a malformed `tools/call`
  // (`arguments: "x"`, no `name`) into -32603 internal error, which an MCP caller must read as a possible
  // effect; the server layer then checks the request and answers -32602 invalid params, nothing run.
  server.setRequestHandler(LOOSE_CALL_TOOL_REQUEST, async (loose): Promise<CallToolResult> => {
    const request = CallToolRequestSchema.parse(loose);
    const { name } = request.params;
    const args = request.params.arguments ?? {};
    const meta = request.params._meta as Record<string, unknown> | undefined;
    const tool = executor.tools.get(name);
    if (!tool) {
      throw invalidParams(`unknown tool ${JSON.stringify(name)}: see tools/list`);
    }
    const badMeta = findBadText({ _meta: meta ?? {} });
    if (badMeta) throw invalidParams(`${badMeta.path.join(".")}: ${badMeta.rule}`);
    // Bad arguments are a tool execution error the model can correct (MCP 2025-11-25, SEP-1303), not a protocol error.
    const badArgs = findBadText(args);
    if (badArgs) {
      return envelopeResult(invalidArgs(name, { field: badArgs.path.join(".") || "args", rule: badArgs.rule }));
    }
    let named: { runId: string | undefined; stepId: string };
    try {
      named = stepAndNamedRun(meta, name, tool, args);
    } catch (error) {
      if (error instanceof MetaError) throw invalidParams(error.message, { field: error.field });
      throw error;
    }
    const deadline = deadlineOf(meta, options);
    // The key's re-check (stdio) reads the database: bounded by the turn minus the reserve, like /mcp's.
    const refused = await authorizeInTime(options, deadline);
    if (refused) return envelopeResult(keyCheckFailed(name, refused));
    const token = meta?.[META_CONFIRMATION];
    const { stepId } = named;
    if (options.inFlight) options.inFlight.count++;
    let envelope: Awaited<ReturnType<Executor["call"]>>;
    let runId: string | null | undefined = named.runId;
    try {
      runId ??= await defaultScopeRun(
        options.defaultScope,
        executor,
        { stepId, tool: name, args },
        options.now(),
        deadline,
      );
      envelope =
        runId === null
          ? scopeTimedOut(name)
          : await executor.call({
              runId,
              stepId,
              tool: name,
              args,
              deadline,
              ...(typeof token === "string" && token ? { confirmationToken: token } : {}),
            });
    } finally {
      if (options.inFlight) options.inFlight.count--;
    }
    const ids = { runId: runId ?? "", stepId };
    logger.info(
      {
        idempotency_key: envelope.idempotency_key || undefined,
        tool: name,
        run_id: ids.runId,
        step_id: ids.stepId,
        status: envelope.status,
        replayed: envelope.replayed,
        attempt: envelope.attempt,
        code: envelope.error?.code,
        caller: options.caller.name,
        tenant: options.caller.tenant,
      },
      "mcp tools/call",
    );
    return envelopeResult(envelope);
  });
  return server;
}

/**
 * Runs `options.authorize` within the turn's deadline minus the reserve (at least 200 ms).
 * @returns null when it passed; why the key could not be checked (too slow, or a transient database
 *   failure) — nothing was sent.
 * @throws what `authorize` throws otherwise (a ProtocolError refusing the call).
 */
async function authorizeInTime(options: GatewayOptions, deadline: Deadline): Promise<string | null> {
  if (!options.authorize) return null;
  const boundMs = Math.max(200, deadline.remainingMs() - DEFAULT_RESERVE_MS);
  try {
    await within(options.authorize(), boundMs, "the API key's re-check");
    return null;
  } catch (error) {
    if (error instanceof NotInTimeError) return error.message;
    if (isTransientDatabaseError(error)) return "the executor's database failed for a moment";
    throw error;
  }
}

/** The answer when the key could not be re-checked in time: nothing sent, safe to repeat. */
function keyCheckFailed(tool: string, why: string): Envelope {
  return refusalEnvelope({
    key: "",
    effectPhrase: tool,
    error: { code: "DEADLINE_EXCEEDED", message: `the API key could not be checked: ${why}` },
    retrySafe: true,
    message:
      "The executor could not check its API key in time (its database is slow or unreachable); nothing was sent. Try again in a moment.",
  });
}

/** The answer when the default scope's look-up did not answer within the turn's deadline: nothing sent. */
function scopeTimedOut(tool: string): Envelope {
  return refusalEnvelope({
    key: "",
    effectPhrase: tool,
    error: { code: "DEADLINE_EXCEEDED", message: "the look-up of this call's run did not answer within the deadline" },
    retrySafe: true,
    message:
      "The turn's time budget ran out before this action could start; nothing was sent. Try again in a new turn with a fresh deadline.",
  });
}

/**
 * The call's deadline: `_meta["io.tristate/deadlineEpochMs"]` (capped like `calls.execute`'s), else
 * the default budget from the request's arrival.
 * @throws ProtocolError invalid params (-32602) naming the `_meta` key for a non-number, past or absurd deadline.
 */
function deadlineOf(meta: Record<string, unknown> | undefined, options: GatewayOptions) {
  const given = meta?.[META_DEADLINE];
  if (given !== undefined && (typeof given !== "number" || !Number.isInteger(given) || given <= 0)) {
    throw invalidParams(`_meta["${META_DEADLINE}"]: must be a positive integer (epoch ms)`);
  }
  try {
    const at = options.arrival?.() ?? options.now();
    return resolveDeadline(given === undefined ? {} : { deadlineEpochMs: given }, at, options.budget);
  } catch (error) {
    if (isAppError(error)) {
      throw invalidParams(`_meta["${META_DEADLINE}"]: ${error.message}`);
    }
    throw error;
  }
}
