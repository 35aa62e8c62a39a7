/**
 * MCP and JSON-RPC answers mapped onto the three outcomes (DESIGN.md "Error mapping"; README
 * "Tristate in front of MCP servers"). The question is the same as for HTTP: could the upstream tool
 * have run?
 *
 * | what came back | outcome |
 * |---|---|
 * | no connection / `initialize` failed (the `tools/call` was never written) | FAILED_NO_EFFECT `NOT_SENT` |
 * | JSON-RPC error -32700 parse, -32600 invalid request, -32601 method not found, -32602 invalid params | FAILED_NO_EFFECT `REJECTED`: answered before the tool ran |
 * | the request timed out (-32001) or was cancelled after it was written (our deadline) | UNKNOWN `READ_TIMEOUT` |
 * | the connection closed while waiting (-32000) | UNKNOWN `RESET_AFTER_WRITE` |
 * | any other JSON-RPC error (-32603 internal, server-defined codes) | UNKNOWN `AMBIGUOUS` |
 * | HTTP status of the POST: 4xx (not 408/409) | FAILED_NO_EFFECT `REJECTED`; 408, 409, 5xx → UNKNOWN |
 * | a result with `isError: true` that is the MCP SDK's own refusal of the arguments before the tool ran (`MCP error -32602: Input validation error: …`, `… Tool X not found`) | FAILED_NO_EFFECT `REJECTED` |
 * | any other `isError: true` result | UNKNOWN `AMBIGUOUS` (the tool ran; its error is no proof of no effect), or FAILED_NO_EFFECT `REJECTED` when the tool declares `errorResults: "no_effect"` |
 */

import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { AmbiguousError, classifyHttpStatus, RejectedError } from "@tristate/core";
import type { UpstreamTransport } from "./upstream.ts";

/** JSON-RPC error codes a server answers before running anything (JSON-RPC 2.0 §5.1). */
const BEFORE_WORK_CODES: ReadonlySet<number> = new Set([
  ErrorCode.ParseError,
  ErrorCode.InvalidRequest,
  ErrorCode.MethodNotFound,
  ErrorCode.InvalidParams,
]);

/**
 * The text of an `isError` result in which the MCP SDK's `McpServer` refuses a call before running
 * the tool's handler: its input validation, an unknown or disabled tool. Anything else a tool
 * returns as an error came from the handler, which may have done its work first.
 */
const SDK_REFUSAL =
  /^MCP error -32602: (Input validation error: |Invalid arguments for tool |Tool \S+ (not found|disabled)$)/;

/** The first text block of a result, or "". */
export function firstText(result: { content?: unknown }): string {
  const blocks = Array.isArray(result.content) ? (result.content as { type?: unknown; text?: unknown }[]) : [];
  const text = blocks.find((b) => b?.type === "text" && typeof b.text === "string");
  return (text?.text as string | undefined) ?? "";
}

/**
 * What a failed `tools/call` means.
 * @param where `<tool> at <server>`, for messages.
 * @param transport `http`: an error this module does not recognise is returned as is, for the
 *   core's classifier and the invoke tracker (which saw what was written); `stdio`: it becomes
 *   UNKNOWN (the request was written to the child's stdin).
 * @param timedOut the call's own timeout signal has fired.
 * @returns the error for the executor to classify (RejectedError, AmbiguousError or the original).
 */
export function upstreamFailure(
  error: unknown,
  where: string,
  transport: UpstreamTransport,
  timedOut: boolean,
): unknown {
  if (error instanceof McpError) {
    if (BEFORE_WORK_CODES.has(error.code)) {
      return new RejectedError(
        `${where}: JSON-RPC error ${error.code} answered before the tool ran: ${error.message}`,
        {
          code: "REJECTED",
          cause: error,
        },
      );
    }
    if (error.code === ErrorCode.RequestTimeout) {
      return new AmbiguousError(
        `${where}: no answer within the call's timeout (${error.message}); the tool may have run`,
        {
          code: "READ_TIMEOUT",
          cause: error,
        },
      );
    }
    if (error.code === ErrorCode.ConnectionClosed) {
      return new AmbiguousError(
        `${where}: the connection closed before the answer (${error.message}); the tool may have run`,
        {
          code: "RESET_AFTER_WRITE",
          cause: error,
        },
      );
    }
    return new AmbiguousError(`${where}: JSON-RPC error ${error.code} (${error.message}); the tool may have run`, {
      code: "AMBIGUOUS",
      cause: error,
    });
  }
  if (error instanceof StreamableHTTPError && error.code !== undefined && error.code >= 100) {
    const verdict = classifyHttpStatus(error.code);
    if (verdict.kind === "rejected") {
      return new RejectedError(`${where}: ${verdict.reason}: ${error.message}`, {
        code: "REJECTED",
        httpStatus: error.code,
        cause: error,
      });
    }
    return new AmbiguousError(`${where}: ${verdict.reason}: ${error.message}`, {
      code: verdict.kind === "ambiguous" ? verdict.code : "AMBIGUOUS",
      httpStatus: error.code,
      cause: error,
    });
  }
  if (timedOut) {
    return new AmbiguousError(
      `${where}: cancelled at the call's timeout after the request was sent; the tool may have run`,
      {
        code: "READ_TIMEOUT",
        cause: error,
      },
    );
  }
  if (transport === "http") return error;
  return new AmbiguousError(
    `${where}: ${error instanceof Error ? error.message : String(error)} after the request was written; the tool may have run`,
    { code: "AMBIGUOUS", cause: error },
  );
}

/**
 * What an `isError: true` result means.
 * @param errorResults the tool's declaration: `no_effect` when its error results mean it did nothing.
 * @returns the error to throw: RejectedError (no effect) or AmbiguousError (it may have run).
 */
export function errorResultFailure(
  result: { content?: unknown; structuredContent?: unknown },
  where: string,
  errorResults: "unknown" | "no_effect",
): Error {
  const text = firstText(result);
  const body = result.structuredContent ?? (text || undefined);
  if (SDK_REFUSAL.test(text)) {
    return new RejectedError(`${where}: the server refused the arguments before running the tool: ${text}`, {
      code: "REJECTED",
      body,
    });
  }
  if (errorResults === "no_effect") {
    return new RejectedError(`${where}: error result, which this tool declares means no effect: ${text}`, {
      code: "REJECTED",
      body,
    });
  }
  return new AmbiguousError(
    `${where}: the tool answered an error after it ran (${text || "no text"}); that is no proof it did nothing`,
    { code: "AMBIGUOUS", body },
  );
}
