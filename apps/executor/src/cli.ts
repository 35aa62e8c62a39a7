/**
 * The `tristate` command line (`apps/executor/bin/tristate.mjs`; `pnpm tristate …` from the repo root):
 *
 *   tristate keys create --role agent|viewer|operator|admin --name NAME [--tenant TENANT] [--json]
 *   tristate keys list [--json]
 *   tristate keys revoke ID
 *   tristate mcp [--url URL] [--key-file FILE]   (stdio relayed to the running service's /mcp; mcp/bridge.ts)
 *   tristate mcp --direct [--key-file FILE]      (the MCP gateway on the database itself; mcp/stdio.ts)
 *
 * `keys` (cli-keys.ts, loaded only for them) uses the service's database: `DATABASE_URL`, else the
 * embedded default (stop the service first: the embedded database allows one process). Exit codes:
 * 0 done, 1 failed, 2 usage error.
 */
import { type CliIo, noPositional, parse, UsageError } from "./cli-args.ts";
import { type McpFlags, runMcpCommand } from "./mcp/command.ts";

const MCP_USAGE = `  tristate mcp [--url URL] [--key-file FILE]
      an MCP server on stdin/stdout (for MCP clients that start a command) relaying to the running
      service's /mcp with the agent key (TRISTATE_API_KEY, or the first line of FILE): the key's
      tenant only. URL: the service (TRISTATE_URL; default http://127.0.0.1:PORT, as npm start prints it)
  tristate mcp --direct [--key-file FILE]
      the same server on the database itself, serving the catalog TRISTATE_CONFIG; whoever holds its
      DATABASE_URL can read every tenant`;

/** The whole usage text (the keys part names the roles, from the database package). */
async function usage(): Promise<string> {
  const { KEYS_USAGE } = await import("./cli-keys.ts");
  return `usage:
${KEYS_USAGE}
${MCP_USAGE}

The keys commands use DATABASE_URL, else the embedded default (TRISTATE_DATA_DIR).`;
}

/** The flags of `tristate mcp`. @throws UsageError */
function mcpFlags(args: string[]): McpFlags {
  if (args.some((a) => a === "--key" || a.startsWith("--key="))) {
    throw new UsageError(
      "mcp: --key would show the key to every user of this machine (ps); set TRISTATE_API_KEY or pass --key-file FILE",
    );
  }
  const p = parse("mcp", args, ["--url", "--key-file"], ["--direct"]);
  noPositional("mcp", p);
  const direct = p.flags.has("--direct");
  const url = p.flags.get("--url") as string | undefined;
  if (direct && url !== undefined) throw new UsageError("mcp: --url and --direct exclude each other");
  const keyFile = p.flags.get("--key-file") as string | undefined;
  return { direct, ...(url !== undefined ? { url } : {}), ...(keyFile !== undefined ? { keyFile } : {}) };
}

/**
 * Runs one command. @returns the exit code: 0 done, 1 failed (database, unknown key), 2 usage error.
 */
export async function main(
  argv: string[],
  io: CliIo = {
    out: (t) => process.stdout.write(t),
    err: (t) => process.stderr.write(t),
    env: process.env,
  },
): Promise<number> {
  try {
    if (argv[0] === "mcp" && !argv.slice(1).some((a) => a === "--help" || a === "-h")) {
      const flags = mcpFlags(argv.slice(1));
      return await runMcpCommand(flags, { env: io.env, stdin: process.stdin, stdout: process.stdout, err: io.err });
    }
    const keys = await import("./cli-keys.ts");
    const action = keys.planKeys(argv);
    if (action === "help") {
      io.out(`${await usage()}\n`);
      return 0;
    }
    return await keys.runKeysAction(action, io);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`tristate ${error.message}\n\n${await usage()}\n`);
    return 2;
  }
}
