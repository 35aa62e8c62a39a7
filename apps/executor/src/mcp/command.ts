/**
 * `tristate mcp [--url URL] [--key-file FILE] [--direct]`: where the key comes from, and which of the
 * two servers runs — the bridge to the running service (bridge.ts, the default) or, with `--direct`,
 * the gateway on the database itself (stdio.ts). Each is imported only when chosen: the bridge loads
 * no database driver and no catalog.
 */
import { readFile, stat } from "node:fs/promises";
import { type Env, readEnv } from "../env.ts";
import { API_KEY_VARIABLE, type StdioIo } from "./stdio-io.ts";

/** The flags of `tristate mcp`, as the command line gave them. */
export interface McpFlags {
  /** `--url`: the service (its base URL or its `/mcp` endpoint). */
  url?: string;
  /** `--key-file`: a file holding the API key (its first line). */
  keyFile?: string;
  /** `--direct`: open the database instead of relaying to the service. */
  direct: boolean;
}

/** A bad setting or flag of `tristate mcp`: printed, exit code 2. */
class McpSetupError extends Error {
  override readonly name = "McpSetupError";
}

/** Listen addresses that mean "every interface": the service is reached on loopback then. */
const WILDCARD_HOSTS: Record<string, string> = { "0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1" };

/**
 * The service's MCP endpoint: `url` (`--url`, else `TRISTATE_URL`) with `/mcp` appended unless its
 * path already ends so; without one, the local service as `npm start` prints it
 * (`http://<HOST>:<PORT>/mcp`, a wildcard `HOST` read as loopback).
 * @throws McpSetupError when `url` is not an http(s) URL.
 */
export function mcpEndpoint(url: string | undefined, env: Pick<Env, "HOST" | "PORT">): URL {
  if (url === undefined) {
    const host = WILDCARD_HOSTS[env.HOST] ?? env.HOST;
    return new URL(`http://${host.includes(":") ? `[${host}]` : host}:${env.PORT}/mcp`);
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new McpSetupError(
      `--url (or TRISTATE_URL) must be an http(s) URL such as http://127.0.0.1:4100, got ${JSON.stringify(url)}`,
    );
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new McpSetupError(`--url (or TRISTATE_URL) must be http: or https:, got ${parsed.protocol}`);
  }
  if (!parsed.pathname.endsWith("/mcp")) parsed.pathname = `${parsed.pathname.replace(/\/+$/, "")}/mcp`;
  return parsed;
}

/** The key: the first line of `--key-file`, else `TRISTATE_API_KEY`. @throws McpSetupError */
async function readSecret(flags: McpFlags, io: StdioIo): Promise<string> {
  if (flags.keyFile === undefined) {
    const secret = io.env[API_KEY_VARIABLE]?.trim();
    if (!secret) {
      throw new McpSetupError(
        `set ${API_KEY_VARIABLE} to an agent key, or pass --key-file FILE (tristate keys create --role agent …)`,
      );
    }
    return secret;
  }
  let text: string;
  try {
    text = await readFile(flags.keyFile, "utf8");
  } catch (error) {
    throw new McpSetupError(`--key-file ${flags.keyFile}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const secret = text.split(/\r?\n/)[0]?.trim();
  if (!secret) throw new McpSetupError(`--key-file ${flags.keyFile}: the file is empty (its first line is the key)`);
  if (((await stat(flags.keyFile)).mode & 0o077) !== 0) {
    io.err(`tristate mcp: warning: --key-file ${flags.keyFile} is readable by other users (chmod 600 it)\n`);
  }
  return secret;
}

/** The warning `--direct` prints: what the database URL gives away. */
const DIRECT_WARNING =
  "tristate mcp --direct: opening the database itself (DATABASE_URL, else the embedded one). This process acts " +
  "as the key's tenant only, but whoever holds this DATABASE_URL can read every tenant's records; without " +
  "--direct, tristate mcp relays to the running service, where the key's tenant is all it reaches.\n";

/**
 * Runs `tristate mcp` with its flags (checked by the caller: `--url` and `--direct` never together).
 * @returns the exit code: 0 after a normal end, 1 when start-up failed, 2 for a missing key or a bad
 *   setting.
 */
export async function runMcpCommand(flags: McpFlags, io: StdioIo): Promise<number> {
  let secret: string;
  let env: Env;
  let endpoint: URL | undefined;
  try {
    secret = await readSecret(flags, io);
    env = readEnv(io.env);
    if (!flags.direct) endpoint = mcpEndpoint(flags.url ?? env.TRISTATE_URL, env);
  } catch (error) {
    io.err(`tristate mcp: ${error instanceof Error ? error.message : String(error)}\n`);
    return 2;
  }
  if (!endpoint) {
    io.err(DIRECT_WARNING);
    const { runMcpStdio } = await import("./stdio.ts");
    return runMcpStdio(io, secret);
  }
  for (const name of ["DATABASE_URL", "TRISTATE_CONFIG"] as const) {
    if (io.env[name]) {
      io.err(`tristate mcp: ${name} is not used: the service at ${endpoint.href} has its own (--direct uses it)\n`);
    }
  }
  const { runMcpBridge } = await import("./bridge.ts");
  return runMcpBridge(
    {
      endpoint,
      secret,
      defaultBudgetMs: env.TRISTATE_DEFAULT_BUDGET_MS,
      maxBudgetMs: env.TRISTATE_MAX_BUDGET_MS,
      logLevel: env.LOG_LEVEL,
    },
    io,
  );
}
