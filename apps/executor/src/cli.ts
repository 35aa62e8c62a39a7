/**
 * The `tristate` command line (`apps/executor/bin/tristate.mjs`; `pnpm tristate …` from the repo root):
 *
 *   tristate keys create --role agent|viewer|operator|admin --name NAME [--tenant TENANT] [--json]
 *   tristate keys list [--json]
 *   tristate keys revoke ID
 *   tristate mcp [--url URL] [--key-file FILE]   (stdio relayed to the running service's /mcp; mcp/bridge.ts)
 *   tristate mcp --direct [--key-file FILE]      (the MCP gateway on the database itself; mcp/stdio.ts)
 *
 * `keys` uses the service's database: `DATABASE_URL`, else the embedded default (stop the service
 * first: the embedded database allows one process). Exit codes: 0 done, 1 failed, 2 usage error.
 */
import { TENANT_PATTERN, TENANT_RULE_TEXT } from "@tristate/core";
import { API_KEY_ROLES, type ApiKeyInfo, type ApiKeyRole, type ApiKeys, openDatabase } from "@tristate/db";
import { readEnv } from "./env.ts";
import { type McpFlags, runMcpCommand } from "./mcp/command.ts";

/** Where the CLI writes; injectable for tests. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
}

const USAGE = `usage:
  tristate keys create --role ${API_KEY_ROLES.join("|")} --name NAME [--tenant TENANT] [--json]
      creates an API key and prints its secret (shown only this once); the key reads and acts on
      its tenant's records only (admins: every tenant's); without --tenant it belongs to "default"
  tristate keys list [--json]
      lists the keys (never their secrets)
  tristate keys revoke ID
      revokes a key and ends its dashboard sessions
  tristate mcp [--url URL] [--key-file FILE]
      an MCP server on stdin/stdout (for MCP clients that start a command) relaying to the running
      service's /mcp with the agent key (TRISTATE_API_KEY, or the first line of FILE): the key's
      tenant only. URL: the service (TRISTATE_URL; default http://127.0.0.1:PORT, as npm start prints it)
  tristate mcp --direct [--key-file FILE]
      the same server on the database itself, serving the catalog TRISTATE_CONFIG; whoever holds its
      DATABASE_URL can read every tenant

The keys commands use DATABASE_URL, else the embedded default (TRISTATE_DATA_DIR).`;

/** A mistake in the command line: printed with the usage, exit code 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

interface Parsed {
  flags: Map<string, string | true>;
  positional: string[];
}

/** Parses `--flag value`, `--flag=value` and boolean flags against the command's allowed flags. */
function parse(command: string, args: string[], valued: string[], booleans: string[] = []): Parsed {
  const flags = new Map<string, string | true>();
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? "";
    if (!arg.startsWith("-") || arg === "-") {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = eq === -1 ? arg : arg.slice(0, eq);
    if (valued.includes(name)) {
      const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
      if (value === undefined || (eq === -1 && value.startsWith("--"))) {
        throw new UsageError(`${command}: ${name} needs a value`);
      }
      if (flags.has(name)) throw new UsageError(`${command}: ${name} is given twice`);
      flags.set(name, value);
    } else if (booleans.includes(name) && eq === -1) {
      flags.set(name, true);
    } else {
      const allowed = [...valued, ...booleans];
      throw new UsageError(
        `${command}: unknown flag ${name}${allowed.length ? ` (allowed: ${allowed.join(", ")})` : " (it takes none)"}`,
      );
    }
  }
  return { flags, positional };
}

function noPositional(command: string, p: Parsed, max = 0): void {
  if (p.positional.length > max) throw new UsageError(`${command}: unexpected argument ${p.positional[max]}`);
}

const iso = (ms: number | null) => (ms === null ? "-" : new Date(ms).toISOString());

function table(keys: ApiKeyInfo[]): string {
  const rows = [
    ["ID", "ROLE", "TENANT", "NAME", "PREFIX", "CREATED", "LAST USED", "STATUS"],
    ...keys.map((k) => [
      k.id,
      k.role,
      k.tenant,
      k.name,
      `${k.prefix}…`, // the start of the secret: ts_<role>_ and 8 characters of its random part
      iso(k.createdAtEpochMs),
      iso(k.lastUsedAtEpochMs),
      k.revokedAtEpochMs === null ? "valid" : `revoked ${iso(k.revokedAtEpochMs)}`,
    ]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? "").length)));
  return rows
    .map((r) =>
      r
        .map((cell, c) => cell.padEnd(widths[c] ?? 0))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

type Action = (keys: ApiKeys, io: CliIo) => Promise<number>;

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

/** Turns the arguments into an action, before the database is opened. @throws UsageError */
function plan(argv: string[]): Action | "help" {
  const [group, verb, ...rest] = argv;
  if (group === undefined || group === "help" || group === "--help" || group === "-h" || group === "mcp") return "help";
  if (group !== "keys") {
    throw new UsageError(`unknown command ${JSON.stringify(group)} (try: tristate keys … or tristate mcp)`);
  }
  if (verb === undefined || verb === "--help" || verb === "-h") return "help";
  switch (verb) {
    case "create": {
      const p = parse("keys create", rest, ["--role", "--name", "--tenant"], ["--json"]);
      noPositional("keys create", p);
      const role = p.flags.get("--role");
      const name = p.flags.get("--name");
      if (role === undefined) throw new UsageError(`keys create: --role is required (${API_KEY_ROLES.join(", ")})`);
      if (!(API_KEY_ROLES as readonly string[]).includes(role as string)) {
        throw new UsageError(
          `keys create: --role must be one of ${API_KEY_ROLES.join(", ")}, got ${JSON.stringify(role)}`,
        );
      }
      if (name === undefined) throw new UsageError("keys create: --name is required");
      if (typeof name !== "string" || name.trim() === "" || name.length > 100) {
        throw new UsageError("keys create: --name must be a non-empty string of at most 100 characters");
      }
      const tenant = p.flags.get("--tenant");
      if (tenant !== undefined && (typeof tenant !== "string" || !TENANT_PATTERN.test(tenant))) {
        throw new UsageError(`keys create: --tenant ${TENANT_RULE_TEXT}, got ${JSON.stringify(tenant)}`);
      }
      const json = p.flags.has("--json");
      return async (keys, io) => {
        const { info, secret } = await keys.create({ name, role: role as ApiKeyRole, tenant });
        if (json) {
          io.out(`${JSON.stringify({ ...info, secret })}\n`);
        } else {
          io.out(
            `Created ${info.role} key "${info.name}" (id ${info.id}) in tenant "${info.tenant}".\nIts secret is shown only this once; store it now:\n\n  ${secret}\n\n`,
          );
        }
        return 0;
      };
    }
    case "list": {
      const p = parse("keys list", rest, [], ["--json"]);
      noPositional("keys list", p);
      const json = p.flags.has("--json");
      return async (keys, io) => {
        const list = await keys.list();
        if (json) io.out(`${JSON.stringify(list)}\n`);
        else io.out(list.length ? `${table(list)}\n` : "No API keys yet. Create one: tristate keys create …\n");
        return 0;
      };
    }
    case "revoke": {
      const p = parse("keys revoke", rest, []);
      noPositional("keys revoke", p, 1);
      const id = p.positional[0];
      if (id === undefined || id.trim() === "") throw new UsageError("keys revoke: the key's ID is required");
      return async (keys, io) => {
        const { revoked, sessionsEnded } = await keys.revoke(id);
        if (revoked) {
          io.out(`Revoked key ${id}${sessionsEnded ? ` and ended ${sessionsEnded} dashboard session(s)` : ""}.\n`);
          return 0;
        }
        const known = (await keys.list()).find((k) => k.id === id);
        io.err(known ? `tristate: key ${id} is already revoked\n` : `tristate: no key with id ${id}\n`);
        return 1;
      };
    }
    default:
      throw new UsageError(`unknown command "keys ${verb}" (keys create | keys list | keys revoke)`);
  }
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
  let action: Action | "help";
  try {
    if (argv[0] === "mcp" && !argv.slice(1).some((a) => a === "--help" || a === "-h")) {
      const flags = mcpFlags(argv.slice(1));
      return await runMcpCommand(flags, { env: io.env, stdin: process.stdin, stdout: process.stdout, err: io.err });
    }
    action = plan(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`tristate ${error.message}\n\n${USAGE}\n`);
    return 2;
  }
  if (action === "help") {
    io.out(`${USAGE}\n`);
    return 0;
  }
  let db: Awaited<ReturnType<typeof openDatabase>> | undefined;
  try {
    const env = readEnv(io.env);
    db = await openDatabase({
      ...(env.DATABASE_URL ? { databaseUrl: env.DATABASE_URL } : { embedded: true }),
      ...(env.TRISTATE_DATA_DIR ? { dataDir: env.TRISTATE_DATA_DIR } : {}),
      poolSize: 2,
    });
    return await action(db.keys, io);
  } catch (error) {
    io.err(`tristate: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    await db?.close().catch(() => {});
  }
}
