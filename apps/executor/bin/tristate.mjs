#!/usr/bin/env node
// The `tristate` command (API keys; `tristate mcp`, the MCP gateway on stdio): runs the built CLI
// (scripts/build.mjs bundles src/cli.ts and the workspace packages into dist/, rebuilding first when a
// source changed; a build note goes to stderr, never stdout, which may be an MCP client's stream).
import { importBuilt } from "../scripts/launch.mjs";

const { main } = await importBuilt("cli");
const code = await main(process.argv.slice(2));
// Exit once the output is written: idle database sockets must not keep the command waiting.
process.stdout.write("", () => process.stderr.write("", () => process.exit(code)));
