/**
 * JSON-RPC errors the gateway answers with. The SDK's server sends a thrown error's `code`,
 * `message` and `data` as they are; an `McpError` would carry its "MCP error -32602: " prefix in the
 * message, and the client's `McpError` adds it again ("MCP error -32602: MCP error -32602: …"), so
 * the gateway throws plain errors with a code instead.
 */
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";

/** An error the MCP SDK's server answers as the JSON-RPC error `{ code, message, data }`. */
export class ProtocolError extends Error {
  override name = "ProtocolError";
  /**
   * @param code a JSON-RPC error code (`ErrorCode` of the MCP SDK, e.g. -32602 invalid params).
   * @param message the error's message, sent without a prefix.
   * @param data extra detail for the client, e.g. `{ field }`.
   */
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** -32602 invalid params (JSON-RPC 2.0 §5.1): the request was refused before anything ran. */
export function invalidParams(message: string, data?: unknown): ProtocolError {
  return new ProtocolError(ErrorCode.InvalidParams, message, data);
}

/** -32600 invalid request (JSON-RPC 2.0 §5.1), e.g. a revoked key on stdio. */
export function invalidRequest(message: string, data?: unknown): ProtocolError {
  return new ProtocolError(ErrorCode.InvalidRequest, message, data);
}
