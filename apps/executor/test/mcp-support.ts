/**
 * Shared pieces of the MCP tests: the ticket catalog in front of the upstream desk, and an SDK
 * `Client` connected to the executor's `/mcp` with a key.
 */

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { AnyTool } from "@tristate/core";
import { buildCatalog } from "../src/catalog/load.ts";
import type { McpToolDeclaration } from "../src/catalog/mcp-tool.ts";
import type { Json } from "./support.ts";

/** The arguments shared by the ticket tools' declarations. */
const ticketArgs = {
  type: "object",
  properties: { subject: { type: "string", description: "What the ticket is about." } },
  required: ["subject"],
} as const;

/**
 * `open_ticket` (unsafe; the key travels as `ref`; key probe `find_ticket_by_ref`) and
 * `open_ticket_flaky` (the same, for the upstream tool that commits and then answers an error).
 * @param server the upstream: `{ url }` or `{ command, args }`.
 */
export function ticketDeclarations(
  server: McpToolDeclaration["server"],
  options: { timeoutMs?: number } = {},
): McpToolDeclaration[] {
  const common = {
    kind: "unsafe" as const,
    server,
    args: ticketArgs,
    identity: { subject: "trim" },
    keyField: "ref",
    timeoutMs: options.timeoutMs ?? 5000,
    keyProbe: {
      tool: "find_ticket_by_ref",
      args: { ref: "{key}" },
      found: { type: "non_empty_array" as const, path: "tickets" },
      // The desk keeps only opened tickets (no declined or unfinished ones): a ticket found is the effect.
      state: "always_done" as const,
    },
    loggableFields: ["subject"],
    describe: 'ticket "{subject}"',
  };
  return [
    { ...common, name: "open_ticket", description: "Opens a support ticket." },
    { ...common, name: "open_ticket_flaky", description: "Opens a ticket (its answers are unreliable)." },
  ];
}

/** The ticket tools, built as the catalog loader builds them. */
export function ticketTools(server: McpToolDeclaration["server"], options: { timeoutMs?: number } = {}) {
  return buildCatalog({ mcpTools: ticketDeclarations(server, options) }) as Promise<AnyTool[]>;
}

/** An SDK client connected to `<executorUrl>/mcp` with `key` as the bearer. */
export async function mcpClient(executorUrl: string, key: string | null): Promise<Client> {
  const client = new Client({ name: "test-agent", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${executorUrl}/mcp`), {
    requestInit: { headers: key ? { authorization: `Bearer ${key}` } : {} },
  });
  await client.connect(transport);
  return client;
}

/** A tool result whose `structuredContent` is the Envelope. */
export const envelopeOf = (result: unknown): Json => (result as CallToolResult).structuredContent;

/** POSTs a raw JSON-RPC `initialize` to `/mcp` (for status-code checks). */
export async function rawInitialize(executorUrl: string, authorization: string | null) {
  const res = await fetch(`${executorUrl}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(authorization ? { authorization } : {}),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    }),
  });
  return { status: res.status, headers: res.headers, json: (await res.json().catch(() => null)) as Json };
}
