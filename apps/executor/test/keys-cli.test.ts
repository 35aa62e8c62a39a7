import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { ApiKeyStore, createTestDatabase, openDatabase, type TestDatabase } from "@tristate/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const BIN = resolve(import.meta.dirname, "../bin/tristate.mjs");

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** Runs the CLI as a user would, on the test database. */
function tristate(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, DATABASE_URL: db.url, LOG_LEVEL: "silent", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    child.on("error", fail);
    child.on("close", (code) => done({ code, stdout, stderr }));
  });
}

async function verify(secret: string) {
  const open = await openDatabase({ databaseUrl: db.url, migrate: false });
  try {
    return await new ApiKeyStore(open.store.prisma).verify(secret);
  } finally {
    await open.close();
  }
}

describe("tristate keys", () => {
  it("create prints the secret once; the key verifies with its role; list shows it without the secret; revoke ends it", async () => {
    const created = await tristate(["keys", "create", "--role", "agent", "--name", "support bot"]);
    expect(created.stderr).toBe("");
    expect(created.code).toBe(0);
    const secret = /\n {2}(ts_agent_[A-Za-z0-9_-]{43})\n/.exec(created.stdout)?.[1];
    expect(secret, created.stdout).toBeDefined();
    expect(created.stdout).toContain('Created agent key "support bot"');
    expect(created.stdout).toContain("shown only this once");
    const info = await verify(secret!);
    expect(info).toMatchObject({ role: "agent", name: "support bot", revokedAtEpochMs: null });

    const asJson = await tristate(["keys", "create", "--role=operator", "--name=ops", "--json"]);
    expect(asJson.code).toBe(0);
    const op = JSON.parse(asJson.stdout) as { id: string; role: string; secret: string };
    expect(op).toMatchObject({ role: "operator", name: "ops" });
    expect(op.secret).toMatch(/^ts_operator_/);

    const list = await tristate(["keys", "list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^ID +ROLE +TENANT +NAME +PREFIX +CREATED +LAST USED +STATUS/);
    expect(list.stdout).toContain(info!.id);
    expect(list.stdout).toContain("support bot");
    expect(list.stdout).not.toContain(secret!);
    expect(list.stdout).not.toContain(op.secret);
    const listed = JSON.parse((await tristate(["keys", "list", "--json"])).stdout) as { id: string }[];
    expect(listed.map((k) => k.id).sort()).toEqual([info!.id, op.id].sort());

    const revoked = await tristate(["keys", "revoke", info!.id]);
    expect(revoked).toMatchObject({ code: 0, stdout: `Revoked key ${info!.id}.\n` });
    expect(await verify(secret!)).toBeNull();
    expect(await verify(op.secret)).toMatchObject({ role: "operator" });
    const again = await tristate(["keys", "revoke", info!.id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe(`tristate: key ${info!.id} is already revoked\n`);
    const missing = await tristate(["keys", "revoke", "no-such-id"]);
    expect(missing).toMatchObject({ code: 1, stderr: "tristate: no key with id no-such-id\n" });
  });

  it("--tenant puts the key in a tenant (default without it); list shows each key's tenant", async () => {
    const res = await tristate([
      "keys",
      "create",
      "--role",
      "agent",
      "--name",
      "acme bot",
      "--tenant",
      "acme",
      "--json",
    ]);
    expect(res.code, res.stderr).toBe(0);
    const acme = JSON.parse(res.stdout) as { id: string; tenant: string; secret: string };
    expect(acme.tenant).toBe("acme");
    expect(await verify(acme.secret)).toMatchObject({ role: "agent", tenant: "acme" });
    const plain = JSON.parse(
      (await tristate(["keys", "create", "--role", "agent", "--name", "plain", "--json"])).stdout,
    );
    expect(plain.tenant).toBe("default");
    const text = await tristate(["keys", "create", "--role", "viewer", "--name", "v", "--tenant", "acme"]);
    expect(text.stdout).toContain('in tenant "acme"');
    const list = await tristate(["keys", "list"]);
    const row = (id: string) => list.stdout.split("\n").find((line) => line.startsWith(id)) ?? "";
    expect(row(acme.id)).toMatch(/ agent +acme +acme bot /);
    expect(row(plain.id)).toMatch(/ agent +default +plain /);
    const listed = JSON.parse((await tristate(["keys", "list", "--json"])).stdout) as { id: string; tenant: string }[];
    expect(listed.find((k) => k.id === acme.id)?.tenant).toBe("acme");
  });

  it("list shows enough of each secret to tell keys of one role apart (ts_operator_ was all it showed)", async () => {
    const made = [];
    for (const name of ["ops one", "ops two"]) {
      const res = await tristate(["keys", "create", "--role", "operator", "--name", name, "--json"]);
      made.push(JSON.parse(res.stdout) as { id: string; prefix: string; secret: string });
    }
    const [one, two] = made as [(typeof made)[0], (typeof made)[0]];
    for (const k of made) {
      expect(k.prefix).toMatch(/^ts_operator_[A-Za-z0-9_-]{8}$/);
      expect(k.secret.startsWith(k.prefix)).toBe(true);
    }
    expect(one.prefix).not.toBe(two.prefix);
    const list = await tristate(["keys", "list"]);
    const row = (id: string) => list.stdout.split("\n").find((line) => line.startsWith(id)) ?? "";
    expect(row(one.id)).toContain(`${one.prefix}…`);
    expect(row(two.id)).toContain(`${two.prefix}…`);
    expect(list.stdout).not.toContain(one.secret);
    const listed = JSON.parse((await tristate(["keys", "list", "--json"])).stdout) as { id: string; prefix: string }[];
    expect(listed.find((k) => k.id === two.id)?.prefix).toBe(two.prefix);
  });

  it("bad flags are usage errors naming the flag (exit 2), and nothing is created", async () => {
    const cases: [string[], string][] = [
      [["keys", "create", "--name", "x"], "tristate keys create: --role is required (agent, viewer, operator, admin)"],
      [
        ["keys", "create", "--role", "root", "--name", "x"],
        'tristate keys create: --role must be one of agent, viewer, operator, admin, got "root"',
      ],
      [["keys", "create", "--role", "agent"], "tristate keys create: --name is required"],
      [
        ["keys", "create", "--role", "agent", "--name", "x", "--tenant", "Acme Corp"],
        `tristate keys create: --tenant must be 1–63 characters: lower-case letters, digits, '-' and '_', starting with a letter or digit, got "Acme Corp"`,
      ],
      [["keys", "create", "--role", "agent", "--name"], "tristate keys create: --name needs a value"],
      [
        ["keys", "create", "--role", "agent", "--name", "x", "--colour", "red"],
        "tristate keys create: unknown flag --colour (allowed: --role, --name, --tenant, --json)",
      ],
      [["keys", "list", "--all"], "tristate keys list: unknown flag --all (allowed: --json)"],
      [["keys", "revoke"], "tristate keys revoke: the key's ID is required"],
      [["keys", "delete", "x"], 'tristate unknown command "keys delete" (keys create | keys list | keys revoke)'],
      [["users"], 'tristate unknown command "users" (try: tristate keys … or tristate mcp)'],
    ];
    const before = JSON.parse((await tristate(["keys", "list", "--json"])).stdout) as unknown[];
    for (const [args, message] of cases) {
      const res = await tristate(args);
      expect(res.code, args.join(" ")).toBe(2);
      expect(res.stderr.split("\n")[0]).toBe(message);
      expect(res.stderr).toContain("usage:");
      expect(res.stdout).toBe("");
    }
    const after = JSON.parse((await tristate(["keys", "list", "--json"])).stdout) as unknown[];
    expect(after).toHaveLength(before.length);
  });

  it("help prints the usage; an unreachable database is a clear failure (exit 1)", async () => {
    const help = await tristate(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("tristate keys create --role agent|viewer|operator|admin --name NAME");
    const down = await tristate(["keys", "list"], { DATABASE_URL: "postgresql://postgres@127.0.0.1:1/none" });
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^tristate: /);
  });
});
