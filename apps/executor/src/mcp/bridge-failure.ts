/**
 * What a failed POST from `tristate mcp`'s bridge (bridge.ts) to the service's `/mcp` means, and the
 * words the agent gets for it. Four cases, decided once here:
 *
 * - `session_gone`: 404 on a request that carried an `Mcp-Session-Id` — the service forgot the session
 *   (it restarted, another replica answered, it ended the session idle or over the key's limit). The
 *   service ran nothing: the bridge opens a new session and sends the same message again.
 * - `refused`: the request never left (connection refused, the name did not resolve: core's
 *   `classifyError` says FAILED_NO_EFFECT `NOT_SENT`). Nothing was sent.
 * - `no_answer`: the request may have reached the service and its answer was lost (a reset, the
 *   service killed mid-call). The bridge repeats the same message, same JSON-RPC id, same `_meta`,
 *   so a `tools/call` keeps its idempotency identity and the executor replays or reconciles it.
 * - `refusal`: the service answered an HTTP error (401 bad key, 403 role, 429, 503, 400): its
 *   JSON-RPC error is passed on with the agent's request id.
 */
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { classifyError } from "@tristate/core";

/** A JSON-RPC error object as the bridge answers it. */
export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** What one failed send means (see the file's header). */
export type SendFailure =
  | { kind: "session_gone" }
  | { kind: "refused"; reason: string }
  | { kind: "no_answer"; reason: string }
  | { kind: "refusal"; status: number; error: RpcError };

/** The SDK's prefix before the body of a non-2xx answer (`StreamableHTTPClientTransport.send`). */
const POST_ERROR_PREFIX = "Error POSTing to endpoint: ";

/** The innermost message of an error's `cause` chain (`connect ECONNREFUSED 127.0.0.1:4100`). */
function innermostMessage(error: unknown): string {
  let link: unknown = error;
  let message = error instanceof Error ? error.message : String(error);
  for (let depth = 0; depth < 8 && link instanceof Error; depth++) {
    if (link.message) message = link.message;
    link = link.cause;
  }
  return message;
}

/** The JSON-RPC error in the body of the service's HTTP error answer, else one made of the status. */
function refusalOf(error: StreamableHTTPError): RpcError {
  const at = error.message.indexOf(POST_ERROR_PREFIX);
  const body = at === -1 ? "" : error.message.slice(at + POST_ERROR_PREFIX.length);
  try {
    const parsed = JSON.parse(body) as { error?: { code?: unknown; message?: unknown; data?: unknown } };
    if (typeof parsed.error?.message === "string") {
      return {
        code: typeof parsed.error.code === "number" ? parsed.error.code : ErrorCode.ConnectionClosed,
        message: parsed.error.message,
        ...(parsed.error.data !== undefined ? { data: parsed.error.data } : {}),
      };
    }
  } catch {
    // not JSON: not the Tristate service's answer (a proxy's page, another server)
  }
  return { code: ErrorCode.ConnectionClosed, message: body.trim().slice(0, 200) || error.message };
}

/**
 * Classifies a rejection of `StreamableHTTPClientTransport.send`.
 * @param hadSession whether the request carried an `Mcp-Session-Id` (a 404 without one is a wrong URL).
 */
export function sendFailureOf(error: unknown, hadSession: boolean): SendFailure {
  if (error instanceof StreamableHTTPError) {
    if (error.code === 404 && hadSession) return { kind: "session_gone" };
    // -1: an answer of an unexpected content type — the service's answer, but not one to relay.
    if (error.code === -1) return { kind: "no_answer", reason: error.message };
    return { kind: "refusal", status: error.code ?? 0, error: refusalOf(error) };
  }
  const c = classifyError(error);
  const reason = innermostMessage(error);
  return c.outcome === "FAILED_NO_EFFECT" && c.code === "NOT_SENT"
    ? { kind: "refused", reason }
    : { kind: "no_answer", reason };
}

/** The hint every "not reachable" message ends with. */
const START_HINT = "Is `npm start` running? (Another address: tristate mcp --url, or TRISTATE_URL.)";

/** The error for a request the service never received (the service is down or elsewhere). */
export function notReachableError(endpoint: URL, reason: string): RpcError {
  return {
    code: ErrorCode.ConnectionClosed,
    message: `tristate mcp: the Tristate service at ${endpoint.href} is not reachable (${reason}); nothing was sent. ${START_HINT} Call again once it runs.`,
  };
}

/** The error for a request whose answer was lost and which could not be repeated in time. */
export function noAnswerError(endpoint: URL, reason: string, waitedMs: number): RpcError {
  return {
    code: ErrorCode.ConnectionClosed,
    message:
      `tristate mcp: the Tristate service at ${endpoint.href} stopped answering during this call (${reason}) ` +
      `and was not back within ${Math.round(waitedMs / 1000)} s, so the call may have taken effect. ${START_HINT} ` +
      "Once it runs, repeat the same call: the executor replays or reconciles it, never a second effect.",
  };
}

/** The service's HTTP error answer, told as the service's (with the key's source for 401). */
export function refusalError(endpoint: URL, failure: Extract<SendFailure, { kind: "refusal" }>): RpcError {
  const whose =
    failure.status === 401
      ? " (the key of TRISTATE_API_KEY or --key-file)"
      : failure.status === 404
        ? " (no MCP endpoint here: check --url)"
        : "";
  return {
    ...failure.error,
    message: `the Tristate service at ${endpoint.href} answered HTTP ${failure.status}${whose}: ${failure.error.message}`,
  };
}
