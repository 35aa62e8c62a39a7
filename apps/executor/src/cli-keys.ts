/**
 * `tristate keys create | list | revoke` (cli.ts): on the service's database — `DATABASE_URL`, else the
 * embedded default (stop the service first: the embedded database allows one process). Loaded only
 * for these commands, so `tristate mcp` never loads the database driver.
 */
import { TENANT_PATTERN, TENANT_RULE_TEXT } from "@tristate/core";
import { API_KEY_ROLES, type ApiKeyInfo, type ApiKeyRole, type ApiKeys, openDatabase } from "@tristate/db";
import { type CliIo, noPositional, parse, UsageError } from "./cli-args.ts";
import { readEnv } from "./env.ts";

/** The keys commands' part of the usage text. */
export const KEYS_USAGE = `  tristate keys create --role ${API_KEY_ROLES.join("|")} --name NAME [--tenant TENANT] [--json]
      creates an API key and prints its secret (shown only this once); the key reads and acts on
      its tenant's records only (admins: every tenant's); without --tenant it belongs to "default"
  tristate keys list [--json]
      lists the keys (never their secrets)
  tristate keys revoke ID
      revokes a key and ends its dashboard sessions`;

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

/** A keys command, ready to run on the database's key store. @returns the exit code. */
export type Action = (keys: ApiKeys, io: CliIo) => Promise<number>;

/** Turns `keys …` into an action, before the database is opened. @throws UsageError */
export function planKeys(argv: string[]): Action | "help" {
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
 * Opens the database (`DATABASE_URL`, else the embedded default in `TRISTATE_DATA_DIR`), runs
 * `action`, closes the database.
 * @returns the action's exit code, or 1 when the database failed (the error on stderr).
 */
export async function runKeysAction(action: Action, io: CliIo): Promise<number> {
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
