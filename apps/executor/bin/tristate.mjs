#!/usr/bin/env node
// The `tristate` command (API keys; `tristate mcp`, the MCP gateway on stdio): runs src/cli.ts through tsx, which loads the
// workspace's TypeScript sources directly.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/cli.ts");
const code = await main(process.argv.slice(2));
// Exit once the output is written: idle database sockets must not keep the command waiting.
process.stdout.write("", () => process.stderr.write("", () => process.exit(code)));
