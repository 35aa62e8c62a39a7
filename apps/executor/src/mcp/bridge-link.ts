/**
 * The service side of `tristate mcp`'s bridge (bridge.ts): one MCP session on the service's `/mcp`
 * (the SDK's `StreamableHTTPClientTransport`, the agent's key as the bearer), opened by the agent's
 * own `initialize` and opened again, with the same `initialize` parameters, when the service forgot
 * it (bridge-failure.ts `session_gone`). A session is transport only on the service (http.ts): calls
 * take their run from `_meta` or the key's default scope, never from the session, so a call repeated
 * in the new session is the same call.
 */
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  type InitializeRequest,
  isJSONRPCErrorResponse,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
  LATEST_PROTOCOL_VERSION,
} from "@modelcontextprotocol/sdk/types.js";

type InitializeParams = InitializeRequest["params"];

/** Raised when the service answers the bridge's own `initialize` with a JSON-RPC error. */
export class SessionRefusedError extends Error {
  override readonly name = "SessionRefusedError";
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** The parameters of a session the bridge opens before the agent sent its own `initialize`. */
const BRIDGE_INITIALIZE: InitializeParams = {
  protocolVersion: LATEST_PROTOCOL_VERSION,
  capabilities: {},
  clientInfo: { name: "tristate-mcp-bridge", version: "1" },
};

/** One session on the service, replaced when the service forgets it. */
export class ServiceLink {
  readonly #endpoint: URL;
  readonly #secret: string;
  readonly #deliver: (message: JSONRPCMessage) => void;
  #current: StreamableHTTPClientTransport | undefined;
  #opening: Promise<StreamableHTTPClientTransport> | undefined;
  #initialize: InitializeParams | undefined;
  /** The agent's `initialize` request id, whose answer sets the session's protocol version. */
  #agentInitializeId: JSONRPCRequest["id"] | undefined;
  #internalIds = 0;
  readonly #internal = new Map<string, (message: JSONRPCMessage) => void>();
  readonly #all = new Set<StreamableHTTPClientTransport>();
  /** Sessions opened again after the service forgot one. */
  reopened = 0;

  /**
   * @param endpoint the service's `/mcp` URL.
   * @param secret the agent's API key (sent as `Authorization: Bearer`).
   * @param deliver gets every message of the service meant for the agent (answers to its requests).
   */
  constructor(endpoint: URL, secret: string, deliver: (message: JSONRPCMessage) => void) {
    this.#endpoint = endpoint;
    this.#secret = secret;
    this.#deliver = deliver;
  }

  #transport(): StreamableHTTPClientTransport {
    const transport = new StreamableHTTPClientTransport(this.#endpoint, {
      requestInit: { headers: { authorization: `Bearer ${this.#secret}` } },
    });
    transport.onmessage = (message) => this.#received(transport, message);
    // Every failure that matters rejects `send`, where the bridge handles it; nothing to do twice here.
    transport.onerror = () => {};
    this.#all.add(transport);
    return transport;
  }

  #received(transport: StreamableHTTPClientTransport, message: JSONRPCMessage): void {
    if ((isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) && typeof message.id === "string") {
      const internal = this.#internal.get(message.id);
      if (internal) {
        this.#internal.delete(message.id);
        internal(message);
        return;
      }
    }
    if (isJSONRPCResultResponse(message) && message.id === this.#agentInitializeId) {
      const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
      if (typeof version === "string") transport.setProtocolVersion(version);
      this.#current = transport; // the agent's session is open
    }
    this.#deliver(message);
  }

  /**
   * A new session for the agent's own `initialize` (sent by the caller through the transport this
   * returns; it becomes the session once the service answers it); its parameters are kept to open
   * the session again later.
   */
  async begin(request: JSONRPCRequest): Promise<StreamableHTTPClientTransport> {
    this.#initialize = request.params as InitializeParams;
    this.#agentInitializeId = request.id;
    const transport = this.#transport();
    await transport.start();
    return transport;
  }

  /**
   * The open session, or a new one when there is none or `stale` is the current one (the service
   * forgot it). Concurrent callers share one opening.
   * @throws what `send` throws (the service down, an HTTP error), or {@link SessionRefusedError}.
   */
  async session(stale?: StreamableHTTPClientTransport): Promise<StreamableHTTPClientTransport> {
    if (this.#current && this.#current !== stale) return this.#current;
    if (!this.#opening) {
      if (stale) this.reopened++;
      this.#opening = this.#open().finally(() => {
        this.#opening = undefined;
      });
    }
    return this.#opening;
  }

  async #open(): Promise<StreamableHTTPClientTransport> {
    const transport = this.#transport();
    await transport.start();
    const id = `tristate-bridge/initialize/${++this.#internalIds}`;
    let answer: JSONRPCMessage | undefined;
    this.#internal.set(id, (message) => {
      answer = message;
    });
    try {
      await transport.send({ jsonrpc: "2.0", id, method: "initialize", params: this.#initialize ?? BRIDGE_INITIALIZE });
    } finally {
      this.#internal.delete(id);
    }
    // `send` resolves after the JSON answer was handed to `onmessage`.
    if (answer && isJSONRPCErrorResponse(answer))
      throw new SessionRefusedError(answer.error.code, answer.error.message);
    if (!answer || !isJSONRPCResultResponse(answer)) throw new Error("the service did not answer initialize");
    const version = (answer.result as { protocolVersion?: unknown }).protocolVersion;
    if (typeof version === "string") transport.setProtocolVersion(version);
    await transport.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    this.#current = transport;
    return transport;
  }

  /** Ends the session on the service (`DELETE /mcp`, best effort, within `timeoutMs`) and every transport. */
  async close(timeoutMs: number): Promise<void> {
    const current = this.#current;
    if (current?.sessionId) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        current.terminateSession().catch(() => {}),
        new Promise((resolve) => {
          timer = setTimeout(resolve, timeoutMs);
        }),
      ]);
      clearTimeout(timer);
    }
    await Promise.all([...this.#all].map((t) => t.close().catch(() => {})));
  }
}
