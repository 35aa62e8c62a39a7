/**
 * Checks of an MCP POST body made before the SDK sees it (issue 21 §4, §7): a JSON-RPC batch carries
 * at most `TRISTATE_MAX_BATCH_CALLS` messages (tRPC's cap) or is refused whole, nothing run; a number
 * JSON would not keep exactly (request-body.ts) is refused naming the field unless it lies in a
 * `tools/call`'s arguments, in a field the tool declares to take it as a string (then it is passed
 * exactly, as that string).
 */
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import type { AnyTool } from "@tristate/core";
import { refuseInexactArgs } from "../api/calls/exact-args.ts";
import { isAppError } from "../app-error.ts";
import { type InexactNumber, inexactNumberRule } from "../request-body.ts";

/** Why a body was refused: the HTTP status and the JSON-RPC error. */
export interface McpRefusal {
  status: 400;
  code: number;
  message: string;
  data?: { field: string };
}

/**
 * The refusal of an MCP POST body, or null when it may go on.
 * @param body the parsed body (inexact numbers already replaced by their text).
 * @param toolOf the caller's tenant's tool of that name, if any.
 */
export function refuseMcpBody(
  body: unknown,
  inexact: readonly InexactNumber[],
  toolOf: (name: string) => AnyTool | undefined,
  maxBatch: number,
): McpRefusal | null {
  if (Array.isArray(body) && body.length > maxBatch) {
    return {
      status: 400,
      code: ErrorCode.InvalidRequest,
      message:
        `a batch may carry at most ${maxBatch} messages (TRISTATE_MAX_BATCH_CALLS); this one has ` +
        `${body.length}: split it (nothing of it ran)`,
    };
  }
  for (const n of inexact) {
    const batched = Array.isArray(body);
    const message = (batched ? body[n.path[0] as number] : body) as
      | { method?: unknown; params?: { name?: unknown; arguments?: unknown } }
      | undefined;
    const path = batched ? n.path.slice(1) : n.path;
    const field = path.join(".") || "body";
    const inArgs = message?.method === "tools/call" && path[0] === "params" && path[1] === "arguments";
    const name = message?.params?.name;
    if (inArgs && path.length > 2 && typeof name === "string") {
      try {
        refuseInexactArgs(toolOf(name), message?.params?.arguments, [{ path: path.slice(2), text: n.text }]);
        continue;
      } catch (error) {
        if (!isAppError(error)) throw error;
      }
    }
    return {
      status: 400,
      code: ErrorCode.InvalidParams,
      message: `${field}: ${inexactNumberRule(n.text)}`,
      data: { field },
    };
  }
  return null;
}
