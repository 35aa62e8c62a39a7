/**
 * `tristate mcp` relays stdio to a running service's `/mcp` (issue 22 §5): the real service in its own
 * process, the real CLI as a child of the SDK's `StdioClientTransport`, the ticket desk as the remote.
 * The agent gets its key's tenant and the HTTP path's dedup scope; a restart of the service (the
 * session forgotten, a call's answer lost) costs neither a call nor a second effect; a service that
 * is down is named in the error.
 */

import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { createTestDatabase, openDatabase, type TestDatabase } from "@tristate/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDesk, startTicketHttpServer, type TicketHttpServer } from "./fixtures/ticket-mcp.ts";
import { envelopeOf, mcpClient, ticketDeclarations } from "./mcp-support.ts";
import { freePort, type ServiceProcess, startServiceProcess } from "./processes.ts";
import type { Json } from "./support.ts";

const bin = join(dirname(fileURLToPath(import.meta.url)), "..", "bin", "tristate.mjs");
let db: TestDatabase;
let desk: TicketHttpServer;
let dir: string;
let port: number;
let service: ServiceProcess | undefined;
const keys = { acme: "", globex: "" };
const clients: Client[] = [];
const ticketsAbout = (subject: string) => desk.desk.tickets.filter((t) => t.subject === subject);

const startService = async () => {
  service = await startServiceProcess({
    DATABASE_URL: db.url,
    TRISTATE_CONFIG: join(dir, "catalog.json"),
    PORT: String(port),
    TRISTATE_SWEEP_INTERVAL_MS: "0",
    TRISTATE_SHUTDOWN_GRACE_MS: "1000",
  });
};

/** `tristate mcp` as an MCP client's config starts it: the key in the environment, flags in `args`. */
async function bridge(key: string, args: string[] = [], env: Record<string, string> = {}) {
  const client = new Client({ name: "bridged-agent", version: "1.0.0" });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, "mcp", ...args],
    env: { ...getDefaultEnvironment(), TRISTATE_API_KEY: key, LOG_LEVEL: "warn", ...env },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  clients.push(client);
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

/** `calls.get` over HTTP with `key`: the status and the record. */
async function record(key: string, idempotencyKey: string): Promise<{ status: number; json: Json }> {
  const input = encodeURIComponent(JSON.stringify({ key: idempotencyKey }));
  const res = await fetch(`${service?.url}/trpc/calls.get?input=${input}`, {
    headers: { authorization: `Bearer ${key}` },
  });
  return { status: res.status, json: await res.json() };
}

beforeAll(async () => {
  desk = await startTicketHttpServer(createDesk());
  db = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), "tristate-mcp-bridge-"));
  await writeFile(join(dir, "catalog.json"), JSON.stringify({ mcpTools: ticketDeclarations({ url: desk.url }) }));
  const opened = await openDatabase({ databaseUrl: db.url, poolSize: 1 });
  try {
    keys.acme = (await opened.keys.create({ name: "bridge acme", role: "agent", tenant: "acme" })).secret;
    keys.globex = (await opened.keys.create({ name: "bridge globex", role: "agent", tenant: "globex" })).secret;
  } finally {
    await opened.close();
  }
  port = await freePort();
  await startService();
}, 60_000);
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await service?.kill();
  await desk?.close();
  await db?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("tristate mcp: the bridge to the running service", () => {
  it("a call through the bridge is its key's tenant's, and HTTP /mcp with the same key replays it (one dedup scope); one effect", async () => {
    // No --url: the local service as `npm start` prints it, on PORT.
    const spawned = performance.now();
    const { client } = await bridge(keys.acme, [], { PORT: String(port) });
    console.log(`tristate mcp (bridge) spawned and initialized in ${Math.round(performance.now() - spawned)} ms`);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["open_ticket", "open_ticket_flaky"]);
    const first = envelopeOf(await client.callTool({ name: "open_ticket", arguments: { subject: "bridged" } }));
    expect(first).toMatchObject({ status: "SUCCEEDED", replayed: false });
    const again = envelopeOf(await client.callTool({ name: "open_ticket", arguments: { subject: "bridged" } }));
    expect(again).toMatchObject({ status: "SUCCEEDED", replayed: true, idempotency_key: first.idempotency_key });
    const overHttp = await mcpClient(service?.url ?? "", keys.acme);
    clients.push(overHttp);
    const viaHttp = envelopeOf(await overHttp.callTool({ name: "open_ticket", arguments: { subject: "bridged" } }));
    expect(viaHttp).toMatchObject({ replayed: true, idempotency_key: first.idempotency_key });
    expect(ticketsAbout("bridged")).toHaveLength(1);
    const own = await record(keys.acme, first.idempotency_key);
    expect(own.json.result.data).toMatchObject({ tenant: "acme", runId: expect.stringMatching(/^mcp-/) });
    expect((await record(keys.globex, first.idempotency_key)).status).toBe(404);
  }, 60_000);

  it("a bad key: the agent's initialize fails naming the service and the key", async () => {
    const refused = bridge("ts_agent_not-a-real-key-000000", ["--url", service?.url ?? ""]);
    await expect(refused).rejects.toThrow(/Tristate service at http:\/\/127\.0\.0\.1:\d+\/mcp answered HTTP 401/);
    await expect(refused).rejects.toThrow(/invalid or revoked/);
  }, 30_000);

  it("the service stopped: a clear error, nothing sent; restarted (the session forgotten): the repeat replays, a new call works, one effect each", async () => {
    const { client } = await bridge(keys.acme, ["--url", service?.url ?? ""]);
    const before = envelopeOf(await client.callTool({ name: "open_ticket", arguments: { subject: "across restart" } }));
    expect(before).toMatchObject({ status: "SUCCEEDED", replayed: false });
    await service?.stop();
    const down = client.callTool({ name: "open_ticket", arguments: { subject: "while down" } });
    await expect(down).rejects.toThrow(
      new RegExp(
        `Tristate service at http://127\\.0\\.0\\.1:${port}/mcp is not reachable .*nothing was sent\\. Is \`npm start\` running\\?`,
      ),
    );
    expect(ticketsAbout("while down")).toHaveLength(0);
    await startService();
    const after = envelopeOf(await client.callTool({ name: "open_ticket", arguments: { subject: "across restart" } }));
    expect(after).toMatchObject({ status: "SUCCEEDED", replayed: true, idempotency_key: before.idempotency_key });
    const fresh = envelopeOf(await client.callTool({ name: "open_ticket", arguments: { subject: "after restart" } }));
    expect(fresh).toMatchObject({ status: "SUCCEEDED", replayed: false });
    expect(ticketsAbout("across restart")).toHaveLength(1);
    expect(ticketsAbout("after restart")).toHaveLength(1);
  }, 90_000);

  it("the service killed mid-call (the answer lost): the bridge repeats the same call once it is back; the agent gets the executor's envelope, one effect", async () => {
    // The bridge repeats for the call's budget: 60 s leaves room for a restart on a loaded machine.
    const { client } = await bridge(keys.acme, ["--url", service?.url ?? ""], { TRISTATE_DEFAULT_BUDGET_MS: "60000" });
    desk.desk.answerDelayMs = 2000; // the desk commits, then answers: the service dies in between
    try {
      const call = client.callTool({ name: "open_ticket", arguments: { subject: "mid-call" } }, undefined, {
        timeout: 60_000,
      });
      const committed = Date.now() + 10_000;
      while (ticketsAbout("mid-call").length === 0 && Date.now() < committed)
        await new Promise((r) => setTimeout(r, 50));
      expect(ticketsAbout("mid-call")).toHaveLength(1);
      const killedAt = performance.now();
      await service?.kill();
      await startService();
      const answer = envelopeOf(await call);
      console.log(
        `service killed mid-call: the bridge's repeat answered ${answer.status} (${answer.error?.code ?? "-"}) ${Math.round(performance.now() - killedAt)} ms after the kill (restart included)`,
      );
      // The first attempt's record: still in flight (its lease) or reconciled by the probe — never sent again.
      expect(["SUCCEEDED", "UNKNOWN"]).toContain(answer.status);
      expect(ticketsAbout("mid-call")).toHaveLength(1);
      expect(desk.desk.calls.open_ticket).toBeGreaterThan(0);
    } finally {
      desk.desk.answerDelayMs = 0;
    }
  }, 90_000);

  it("no service at the URL at start: the agent's initialize fails saying so", async () => {
    const closed = await freePort();
    await expect(bridge(keys.acme, ["--url", `http://127.0.0.1:${closed}`])).rejects.toThrow(
      new RegExp(
        `Tristate service at http://127\\.0\\.0\\.1:${closed}/mcp is not reachable \\(.*ECONNREFUSED.*\\); nothing was sent\\. Is \`npm start\` running\\?`,
      ),
    );
  }, 30_000);

  it("--direct opens the database itself (as before), after a warning that its URL reads every tenant", async () => {
    const { client, stderr } = await bridge(keys.acme, ["--direct"], {
      DATABASE_URL: db.url,
      TRISTATE_CONFIG: join(dir, "catalog.json"),
    });
    const direct = envelopeOf(await client.callTool({ name: "open_ticket", arguments: { subject: "direct" } }));
    expect(direct).toMatchObject({ status: "SUCCEEDED", replayed: false });
    expect(ticketsAbout("direct")).toHaveLength(1);
    expect(stderr()).toMatch(/whoever holds this DATABASE_URL can read every tenant's records/);
    expect((await record(keys.acme, direct.idempotency_key)).json.result.data).toMatchObject({ tenant: "acme" });
  }, 60_000);
});
