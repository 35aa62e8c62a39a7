/**
 * `tristate mcp` (the default): a bridge from stdio to a running service's `/mcp` (Streamable HTTP),
 * for MCP clients that start their servers as commands. The agent's key (`TRISTATE_API_KEY` or
 * `--key-file`) is the bearer of every request, so the agent gets exactly what HTTP gives it: its
 * tenant's records only, the same dedup scope (its `_meta` run, else the key's default scope), the
 * key checked on every request. This process opens no database and holds no catalog.
 *
 * Messages pass through unchanged (the SDK's `StdioServerTransport` on one side, its
 * `StreamableHTTPClientTransport` on the other, bridge-link.ts), but for a message holding a number
 * JSON cannot hold exactly: it is answered -32602 naming the field, as HTTP `/mcp` answers it, and
 * never forwarded (bridge-exact.ts). When a POST fails (bridge-failure.ts):
 * - the service forgot the session (404): a new session (the agent's own `initialize` parameters), and
 *   the same message again — the service had run nothing;
 * - the service is not reachable (nothing sent): the agent gets a JSON-RPC error naming the URL and
 *   asking whether `npm start` is running;
 * - the answer was lost (the service stopped mid-call): the same message — same id, arguments and
 *   `_meta`, so the executor replays or reconciles a `tools/call` — every {@link RETRY_SPACING_MS}
 *   until the call's deadline (`io.tristate/deadlineEpochMs`, at most `TRISTATE_MAX_BUDGET_MS` away)
 *   or `TRISTATE_DEFAULT_BUDGET_MS`; then an error saying the call may have taken effect and that
 *   repeating it is safe;
 * - the service refused it (401, 403, 429, 503, 400): its JSON-RPC error, with the agent's id.
 * A request the agent cancels (`notifications/cancelled`) is not repeated.
 */
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  ErrorCode,
  isInitializeRequest,
  isJSONRPCNotification,
  isJSONRPCRequest,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import pino, { type Logger } from "pino";
import { exactLines } from "./bridge-exact.ts";
import { noAnswerError, notReachableError, type RpcError, refusalError, sendFailureOf } from "./bridge-failure.ts";
import { ServiceLink, SessionRefusedError } from "./bridge-link.ts";
import { META_DEADLINE } from "./run-step.ts";
import type { StdioIo } from "./stdio-io.ts";

/** Wait between repeats of a request whose answer was lost, ms. */
export const RETRY_SPACING_MS = 500;
/** Most new sessions one request opens (the service forgetting each at once is not a restart). */
const MAX_REOPENS_PER_REQUEST = 3;
/** How long ending the session on the service (`DELETE /mcp`) may take at the end, ms. */
const CLOSE_TIMEOUT_MS = 1000;
/** Past the latest deadline of the requests in flight at end of input, how long their answers are awaited, ms. */
const DRAIN_GRACE_MS = 1000;

/** What the bridge needs to know. */
export interface BridgeOptions {
  /** The service's MCP endpoint (`…/mcp`). */
  endpoint: URL;
  /** The agent's API key. */
  secret: string;
  /** How long a request naming no deadline is repeated after its answer was lost, ms. */
  defaultBudgetMs: number;
  /** The farthest a request's own deadline may put its last repeat, ms from its arrival. */
  maxBudgetMs: number;
  /** pino level of the diagnostics on stderr. */
  logLevel: string;
}

interface Bridge {
  options: BridgeOptions;
  link: ServiceLink;
  logger: Logger;
  toAgent(message: JSONRPCMessage): void;
  /** Requests the agent cancelled: not repeated. */
  cancelled: Set<RequestId>;
  /** Requests being relayed: each one's relay and the time until which it may be repeated (epoch ms). */
  inflight: Set<{ relay: Promise<void>; until: number }>;
  closing: boolean;
}

/** The time until which a request whose answer was lost is repeated, epoch ms. */
function repeatUntil(bridge: Bridge, request: JSONRPCRequest, arrivedEpochMs: number): number {
  const meta = (request.params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  const deadline = meta?.[META_DEADLINE];
  return typeof deadline === "number" && Number.isFinite(deadline)
    ? Math.min(deadline, arrivedEpochMs + bridge.options.maxBudgetMs)
    : arrivedEpochMs + bridge.options.defaultBudgetMs;
}

function answerError(bridge: Bridge, id: RequestId, error: RpcError): void {
  bridge.logger.warn({ id, error: error.message }, "answered the agent with an error");
  bridge.toAgent({ jsonrpc: "2.0", id, error });
}

/** Sends one request of the agent until it is answered or must be answered with an error (header). */
async function relayRequest(bridge: Bridge, request: JSONRPCRequest, arrived: number, until: number): Promise<void> {
  const { endpoint } = bridge.options;
  /** Why an earlier attempt's answer was lost: set once the request may have reached the service. */
  let lost: string | undefined;
  let reopens = 0;
  let stale: StreamableHTTPClientTransport | undefined;
  for (;;) {
    if (bridge.closing || bridge.cancelled.has(request.id)) return;
    let transport: StreamableHTTPClientTransport | undefined;
    let hadSession = false;
    try {
      transport = isInitializeRequest(request) ? await bridge.link.begin(request) : await bridge.link.session(stale);
      hadSession = transport.sessionId !== undefined;
      await transport.send(request);
      return;
    } catch (error) {
      if (bridge.closing) {
        bridge.logger.warn({ id: request.id }, "end of input: the request was abandoned before its answer came");
        return;
      }
      if (error instanceof SessionRefusedError) {
        const message = `the Tristate service at ${endpoint.href} refused a new session: ${error.message}`;
        return answerError(bridge, request.id, { code: error.code, message });
      }
      const failure = sendFailureOf(error, hadSession);
      if (failure.kind === "session_gone") {
        stale = transport;
        if (++reopens <= MAX_REOPENS_PER_REQUEST) continue;
        return answerError(bridge, request.id, {
          code: ErrorCode.ConnectionClosed,
          message: `the Tristate service at ${endpoint.href} forgot ${reopens} new sessions in a row; nothing more was sent`,
        });
      }
      if (failure.kind === "refusal") return answerError(bridge, request.id, refusalError(endpoint, failure));
      if (failure.kind === "refused" && lost === undefined) {
        return answerError(bridge, request.id, notReachableError(endpoint, failure.reason));
      }
      if (failure.kind === "no_answer") {
        lost = failure.reason;
        bridge.logger.warn({ id: request.id, reason: lost }, "the answer was lost; repeating the same request");
      }
      if (Date.now() + RETRY_SPACING_MS > until) {
        return answerError(bridge, request.id, noAnswerError(endpoint, lost ?? "no answer", Date.now() - arrived));
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_SPACING_MS));
    }
  }
}

/** Passes a notification (or an answer to the service) on, once; a failure is only logged. */
async function relayOther(bridge: Bridge, message: JSONRPCMessage): Promise<void> {
  if (isJSONRPCNotification(message) && message.method === "notifications/cancelled") {
    const requestId = (message.params as { requestId?: RequestId } | undefined)?.requestId;
    if (requestId !== undefined) bridge.cancelled.add(requestId);
  }
  try {
    await (await bridge.link.session()).send(message);
  } catch (error) {
    bridge.logger.debug({ err: error }, "a notification did not reach the service");
  }
}

/**
 * At end of input (`printf '<request>\n' | tristate mcp`): waits for the answers of the requests in
 * flight, at most until the latest of their deadlines plus {@link DRAIN_GRACE_MS}.
 */
async function drain(bridge: Bridge): Promise<void> {
  if (bridge.inflight.size === 0) return;
  const latest = Math.max(...[...bridge.inflight].map((e) => e.until));
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, Math.max(0, latest - Date.now()) + DRAIN_GRACE_MS);
  });
  await Promise.race([Promise.all([...bridge.inflight].map((e) => e.relay)), bound]);
  clearTimeout(timer);
}

/**
 * Relays stdin/stdout to the service until stdin ends (or SIGTERM/SIGINT), then ends the session on
 * the service; at end of input the answers of requests in flight are awaited first (bounded by their
 * deadlines), so a piped request is answered. Calls still running there run to their outcome (the executor never stops a call its
 * client left); a repeat answers it.
 * @returns the exit code: 0.
 */
export async function runMcpBridge(options: BridgeOptions, io: StdioIo): Promise<number> {
  const logger = pino(
    { level: options.logLevel, base: { service: "tristate-mcp" }, timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination(2),
  );
  // Lines holding a number JSON.parse would round are answered here, never forwarded (bridge-exact.ts).
  const exact = exactLines((refusal) => {
    logger.warn({ field: refusal.field }, "refused a message holding a number JSON cannot hold exactly");
    if (refusal.request) bridge.toAgent(refusal.answer);
  });
  io.stdin.pipe(exact);
  const stdio = new StdioServerTransport(exact as unknown as NodeJS.ReadStream, io.stdout as NodeJS.WriteStream);
  const bridge: Bridge = {
    options,
    logger,
    link: new ServiceLink(options.endpoint, options.secret, (message) => bridge.toAgent(message)),
    toAgent: (message) => {
      if (!bridge.closing) stdio.send(message).catch((error) => logger.warn({ err: error }, "stdout failed"));
    },
    cancelled: new Set(),
    inflight: new Set(),
    closing: false,
  };
  stdio.onmessage = (message) => {
    // Each message on its own: a call waiting for its answer never holds up the next one.
    const failed = (error: unknown) => {
      logger.error({ err: error }, "relaying a message failed");
      if (isJSONRPCRequest(message)) {
        answerError(bridge, message.id, { code: ErrorCode.InternalError, message: "tristate mcp: internal error" });
      }
    };
    if (!isJSONRPCRequest(message)) return void relayOther(bridge, message).catch(failed);
    const arrived = Date.now();
    const entry = { relay: Promise.resolve(), until: repeatUntil(bridge, message, arrived) };
    entry.relay = relayRequest(bridge, message, arrived, entry.until)
      .catch(failed)
      .finally(() => bridge.inflight.delete(entry));
    bridge.inflight.add(entry);
  };
  stdio.onerror = (error) => logger.warn({ err: error }, "a message on stdin is not JSON-RPC");
  const ended = new Promise<"input" | "signal">((resolve) => {
    io.stdin.on("end", () => resolve("input"));
    io.stdin.on("close", () => resolve("input"));
    process.once("SIGTERM", () => resolve("signal"));
    process.once("SIGINT", () => resolve("signal"));
  });
  await stdio.start();
  logger.info({ endpoint: options.endpoint.href }, "tristate mcp relaying stdio to the service");
  if ((await ended) === "input") await drain(bridge);
  bridge.closing = true;
  await bridge.link.close(CLOSE_TIMEOUT_MS);
  await stdio.close();
  return 0;
}
