/**
 * `npx tristate mcp --direct`: the MCP gateway on stdio on the database itself (issue 11 §3; without
 * `--direct` it relays to the service, mcp-bridge.test.ts), driven by the SDK's real `Client`
 * through `StdioClientTransport`, with the key in TRISTATE_API_KEY verified against PostgreSQL and
 * the ticket catalog in TRISTATE_CONFIG in front of an upstream desk the test starts.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { ApiKeyStore } from "@tristate/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDesk, startTicketHttpServer, type TicketHttpServer } from "./fixtures/ticket-mcp.ts";
import { envelopeOf, ticketDeclarations } from "./mcp-support.ts";
import { startStack, type TestStack } from "./support.ts";

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const bin = join(repoRoot, "apps", "executor", "bin", "tristate.mjs");
let stack: TestStack;
let desk: TicketHttpServer;
let dir: string;
let catalogFile: string;
let acmeKey: string;
const clients: Client[] = [];
const ticketsAbout = (subject: string) => desk.desk.tickets.filter((t) => t.subject === subject);

const childEnv = (key: string) => ({
  ...getDefaultEnvironment(),
  DATABASE_URL: stack.db.url,
  TRISTATE_CONFIG: catalogFile,
  TRISTATE_API_KEY: key,
  LOG_LEVEL: "silent",
});

/** `npx tristate mcp` in the repository's root, as an MCP client's config starts it. */
async function stdioClient(key: string): Promise<Client> {
  const client = new Client({ name: "stdio-agent", version: "1.0.0" });
  const transport = new StdioClientTransport({
    command: "npx",
    args: ["--offline", "--no", "tristate", "mcp", "--direct"],
    cwd: repoRoot,
    env: childEnv(key),
    stderr: "pipe",
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** Runs the bin with `mcp` and stdin closed: its exit code and stderr. */
function runOnce(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, "mcp", "--direct"], { env, stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    child.stdin.end();
    child.once("exit", (code) => resolve({ code, stderr }));
  });
}

beforeAll(async () => {
  desk = await startTicketHttpServer(createDesk());
  stack = await startStack();
  dir = await mkdtemp(join(tmpdir(), "tristate-mcp-cli-"));
  catalogFile = join(dir, "catalog.json");
  await writeFile(catalogFile, JSON.stringify({ mcpTools: ticketDeclarations({ url: desk.url }) }));
  acmeKey = (
    await new ApiKeyStore(stack.service.services.store.prisma).create({ name: "stdio", role: "agent", tenant: "acme" })
  ).secret;
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await stack?.close();
  await desk?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("npx tristate mcp --direct (stdio)", () => {
  it("serves the catalog; a call answers the Envelope, a repeat replays, one effect; the record is the key's tenant's", async () => {
    const client = await stdioClient(acmeKey);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["open_ticket", "open_ticket_flaky"]);
    const first = await client.callTool({ name: "open_ticket", arguments: { subject: "stdio ticket" } });
    expect(envelopeOf(first)).toMatchObject({ status: "SUCCEEDED", replayed: false });
    const again = await client.callTool({ name: "open_ticket", arguments: { subject: "stdio ticket" } });
    expect(envelopeOf(again)).toMatchObject({ status: "SUCCEEDED", replayed: true });
    expect(ticketsAbout("stdio ticket")).toHaveLength(1);
    const key = envelopeOf(first).idempotency_key;
    const record = await stack.get("calls.get", { key }, acmeKey);
    expect(record.json.result.data).toMatchObject({ tenant: "acme", runId: expect.stringMatching(/^mcp-/) });
    expect((await stack.get("calls.get", { key }, stack.keys.agent)).status).toBe(404); // default tenant
  });

  it("`tristate mcp` restarted: the client's repeat in the new process replays the first call (the key's scope, not the process); one effect", async () => {
    const first = await stdioClient(acmeKey);
    const a = envelopeOf(await first.callTool({ name: "open_ticket", arguments: { subject: "stdio restart" } }));
    expect(a).toMatchObject({ status: "SUCCEEDED", replayed: false });
    await first.close(); // the process ends with its stdin
    const second = await stdioClient(acmeKey);
    const b = envelopeOf(await second.callTool({ name: "open_ticket", arguments: { subject: "stdio restart " } }));
    expect(b).toMatchObject({ status: "SUCCEEDED", replayed: true, idempotency_key: a.idempotency_key });
    expect(ticketsAbout("stdio restart")).toHaveLength(1);
  });

  it("a key revoked while `tristate mcp` runs is refused at its next call; nothing is sent", async () => {
    const made = await new ApiKeyStore(stack.service.services.store.prisma).create({
      name: "stdio soon revoked",
      role: "agent",
      tenant: "acme",
    });
    const client = await stdioClient(made.secret);
    const ok = await client.callTool({ name: "open_ticket", arguments: { subject: "before revoke" } });
    expect(envelopeOf(ok)).toMatchObject({ status: "SUCCEEDED" });
    await new ApiKeyStore(stack.service.services.store.prisma).revoke(made.info.id);
    await expect(client.callTool({ name: "open_ticket", arguments: { subject: "after revoke" } })).rejects.toThrow(
      /no longer valid \(revoked\)/,
    );
    expect(ticketsAbout("after revoke")).toHaveLength(0);
  });

  it("timeout, cancel, repeat over stdio: one effect", async () => {
    const client = await stdioClient(acmeKey);
    desk.desk.answerDelayMs = 1500;
    try {
      const args = { subject: "slow over stdio" };
      const timedOut = await client
        .callTool({ name: "open_ticket", arguments: args }, undefined, { timeout: 300 })
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect((timedOut as McpError).code).toBe(ErrorCode.RequestTimeout);
      expect(timedOut).toBeInstanceOf(McpError);
      const during = await client.callTool({ name: "open_ticket", arguments: args });
      expect(during.isError).toBe(true);
      expect(envelopeOf(during)).toMatchObject({ status: "UNKNOWN", retry_safe: false });
      // The first send answers after 1.5 s; its outcome is written some time after (later on a loaded
      // machine). A repeat only reports the status, so repeating until it settles sends nothing.
      let after = envelopeOf(await client.callTool({ name: "open_ticket", arguments: args }));
      for (let i = 0; i < 60 && after.status === "UNKNOWN"; i++) {
        await new Promise((r) => setTimeout(r, 250));
        after = envelopeOf(await client.callTool({ name: "open_ticket", arguments: args }));
      }
      expect(after).toMatchObject({ status: "SUCCEEDED", replayed: true });
      expect(ticketsAbout("slow over stdio")).toHaveLength(1);
    } finally {
      desk.desk.answerDelayMs = 0;
    }
  });

  it("the key: missing → exit 2; invalid → exit 1; a viewer key → exit 1; no catalog → exit 2; nothing is served", async () => {
    const base = childEnv("");
    const { TRISTATE_API_KEY: _, ...noKey } = base;
    const missing = await runOnce(noKey);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/TRISTATE_API_KEY/);
    const bad = await runOnce({ ...base, TRISTATE_API_KEY: "ts_agent_not-a-real-key-000000" });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/not a valid key/);
    const viewer = await runOnce({ ...base, TRISTATE_API_KEY: stack.keys.viewer });
    expect(viewer.code).toBe(1);
    expect(viewer.stderr).toMatch(/role viewer/);
    // No catalog: an MCP server with no tools would look broken to the client, so it says why and stops.
    const { TRISTATE_CONFIG: __, ...noCatalog } = { ...base, TRISTATE_API_KEY: acmeKey };
    const empty = await runOnce(noCatalog);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/TRISTATE_CONFIG/);
  });

  it("the embedded database held by the running service: the error says to use DATABASE_URL or the HTTP endpoint (issue 14)", async () => {
    // The service's lock on its embedded folder, held by a live process (this test's).
    const dataDir = join(dir, "pgdata");
    await writeFile(`${dataDir}.lock`, String(process.pid));
    const { DATABASE_URL: _, ...embedded } = { ...childEnv(acmeKey), TRISTATE_DATA_DIR: dataDir };
    const held = await runOnce(embedded);
    expect(held.code).toBe(1);
    expect(held.stderr).toMatch(/in use by process \d+ \(the Tristate service/);
    expect(held.stderr).toMatch(/run tristate mcp without --direct \(it relays to the service's \/mcp/);
    expect(held.stderr).toMatch(/give tristate mcp --direct a PostgreSQL server in DATABASE_URL/);
    expect(held.stderr).toMatch(/http:\/\/127\.0\.0\.1:4100\/mcp/);
  });
});
