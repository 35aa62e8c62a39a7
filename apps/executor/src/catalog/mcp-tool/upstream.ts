/**
 * Connections to upstream MCP servers: one connected SDK `Client` per server (Streamable HTTP or
 * stdio), made on first use and shared by every tool and probe of that server, remade after it
 * closes. Connecting is detached from the calling tool's async context, so the `initialize`
 * exchange never counts as a request of the tool's `invoke` (invoke-tracker.ts): only the
 * `tools/call` request itself does.
 */
import { AsyncResource } from "node:async_hooks";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { isNotSentError, NotSentError } from "@tristate/core";
import type { McpServerSpec } from "./schema.ts";

/** The name and version Tristate gives as an MCP client. */
const CLIENT_INFO = { name: "tristate-executor", version: "0.1.0" };

/** Runs `fn` outside any tool's invoke (the async context of this module's load). */
const detached = new AsyncResource("tristate.mcp-upstream");

/** Connected clients of the upstream servers of one catalog. */
export interface UpstreamPool {
  /**
   * The connected client of `server` (connecting on first use, or after the last one closed).
   * @param signal aborts waiting for the connection (the call's timeout).
   * @throws NotSentError `NOT_SENT` when the server cannot be reached or refuses `initialize`
   *   (nothing of the tool call was sent), or when `signal` aborts first.
   */
  client(server: McpServerSpec, signal: AbortSignal): Promise<Client>;
  /** Forgets `client` (after a transport failure) so that the next call connects again. */
  drop(server: McpServerSpec, client: Client): void;
  /** Closes every connection (stdio servers' processes end). */
  close(): Promise<void>;
}

/** `http` for Streamable HTTP servers, `stdio` for child processes. */
export type UpstreamTransport = "http" | "stdio";

/** Which transport a server spec uses. */
export const transportOf = (server: McpServerSpec): UpstreamTransport => ("url" in server ? "http" : "stdio");

/** A short name of the server for messages (its URL without query, or its command). */
export function serverLabel(server: McpServerSpec): string {
  if ("url" in server) {
    const url = new URL(server.url);
    return `${url.origin}${url.pathname}`;
  }
  return [server.command, ...server.args].join(" ");
}

/** Creates an empty pool. */
export function createUpstreamPool(): UpstreamPool {
  const clients = new Map<string, Promise<Client>>();
  const keyOf = (server: McpServerSpec) => JSON.stringify(server);
  let closed = false;

  const connect = async (server: McpServerSpec, key: string): Promise<Client> => {
    const transport: Transport =
      "url" in server
        ? new StreamableHTTPClientTransport(new URL(server.url), {
            ...(server.headers ? { requestInit: { headers: server.headers } } : {}),
          })
        : new StdioClientTransport({
            command: server.command,
            args: server.args,
            env: { ...getDefaultEnvironment(), ...server.env },
            ...(server.cwd ? { cwd: server.cwd } : {}),
            stderr: "inherit",
          });
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    client.onclose = () => {
      void clients.get(key)?.then(
        (c) => c === client && clients.delete(key),
        () => {},
      );
    };
    try {
      await client.connect(transport);
    } catch (error) {
      await transport.close().catch(() => {});
      throw error;
    }
    return client;
  };

  return {
    async client(server, signal) {
      if (closed) throw new NotSentError("the executor is shutting down; nothing was sent", { code: "NOT_SENT" });
      const key = keyOf(server);
      let pending = clients.get(key);
      if (!pending) {
        pending = detached.runInAsyncScope(() => connect(server, key));
        clients.set(key, pending);
        pending.catch(() => {
          if (clients.get(key) === pending) clients.delete(key);
        });
      }
      let onAbort: (() => void) | undefined;
      const aborted = new Promise<never>((_, reject) => {
        onAbort = () =>
          reject(
            new NotSentError(
              `MCP server ${serverLabel(server)}: no connection within the call's timeout; nothing was sent`,
              { code: "NOT_SENT" },
            ),
          );
        if (signal.aborted) onAbort();
        else signal.addEventListener("abort", onAbort, { once: true });
      });
      try {
        return await Promise.race([pending, aborted]);
      } catch (error) {
        if (isNotSentError(error)) throw error;
        throw new NotSentError(
          `MCP server ${serverLabel(server)}: cannot connect (${error instanceof Error ? error.message : String(error)}); nothing was sent`,
          { code: "NOT_SENT", cause: error },
        );
      } finally {
        if (onAbort) signal.removeEventListener("abort", onAbort);
      }
    },
    drop(server, client) {
      const key = keyOf(server);
      void clients.get(key)?.then(
        (c) => {
          if (c === client) clients.delete(key);
        },
        () => {},
      );
      void client.close().catch(() => {});
    },
    async close() {
      closed = true;
      const all = [...clients.values()];
      clients.clear();
      await Promise.all(all.map((p) => p.then((c) => c.close()).catch(() => {})));
    },
  };
}
