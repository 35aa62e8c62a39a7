/**
 * Declarative upstream MCP tools: a JSON declaration (the upstream server — Streamable HTTP URL or
 * stdio command — and tool, argument fields, identity fields with canonicalisers, the argument that
 * carries the idempotency key, key and identity probes that are other tools of the same server, what
 * an error result means, timeouts) turned into a `defineTool` tool. The pieces live in `mcp-tool/`:
 * `schema.ts` (the format), `validate.ts`, `upstream.ts` (connections), `outcomes.ts` (MCP and
 * JSON-RPC errors onto the three outcomes) and `build.ts`.
 */
export { closeMcpUpstreams, mcpTool } from "./mcp-tool/build.ts";
export type { McpFoundRule, McpToolDeclaration } from "./mcp-tool/schema.ts";
export { createUpstreamPool } from "./mcp-tool/upstream.ts";
