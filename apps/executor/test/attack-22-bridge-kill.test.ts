/**
 * Issue 22 §5 attack: `tristate mcp` (the bridge) repeats a call whose answer was lost. At a remote
 * that never deduplicates (the ticket desk opens a ticket per call) and a tool with no key and no
 * probe (nothing can prove an effect absent), the service is SIGKILLed at two moments of a call and
 * restarted on the same port:
 * - the request is on the wire to the remote, never delivered (the remote holds it, then drops it);
 * - the remote committed the ticket and has not answered yet.
 * Invariants, whatever the moment: at most one ticket, also after the agent repeats the call itself;
 * the agent is never told SUCCEEDED without a ticket nor FAILED_NO_EFFECT with one; the bridge of
 * tenant globex never reads acme's record of the call.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer as createHttpServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { createTestDatabase, openDatabase, type TestDatabase } from "@tristate/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDesk, ticketMcpServer } from "./fixtures/ticket-mcp.ts";
import { envelopeOf } from "./mcp-support.ts";
import { type ServiceProcess, startServiceProcess } from "./processes.ts";

const bin = join(dirname(fileURLToPath(import.meta.url)), "..", "bin", "tristate.mjs");
const desk = createDesk();
/** While set, an `open_ticket` call reaching the desk is held (never run) until its connection closes. */
let holding = false;
let held = 0;
let deskServer: Server;
let deskUrl = "";
let db: TestDatabase;
let dir: string;
let service: ServiceProcess | undefined;
let port = 0;
const keys = { acme: "", globex: "" };
const clients: Client[] = [];

async function startDesk(): Promise<void> {
  deskServer = createHttpServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req as AsyncIterable<Buffer>) chunks.push(c);
    const text = Buffer.concat(chunks).toString("utf8");
    if (holding && text.includes('"tools/call"') && text.includes('"open_ticket"')) {
      held++;
      return; // never answered, never run: the connection dies with the service
    }
    const server = ticketMcpServer(desk);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, text ? JSON.parse(text) : undefined);
  });
  await new Promise<void>((resolve) => deskServer.listen(0, "127.0.0.1", resolve));
  deskUrl = `http://127.0.0.1:${(deskServer.address() as AddressInfo).port}/mcp`;
}

const startService = async () => {
  service = await startServiceProcess({
    DATABASE_URL: db.url,
    TRISTATE_CONFIG: join(dir, "catalog.json"),
    PORT: String(port),
    TRISTATE_SWEEP_INTERVAL_MS: "0",
    TRISTATE_SHUTDOWN_GRACE_MS: "1000",
  });
  port = Number(new URL(service.url).port);
};

async function bridge(key: string): Promise<Client> {
  const client = new Client({ name: "attack-agent", version: "1.0.0" });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, "mcp", "--url", service?.url ?? ""],
    env: { ...getDefaultEnvironment(), TRISTATE_API_KEY: key, LOG_LEVEL: "warn", TRISTATE_DEFAULT_BUDGET_MS: "60000" },
    stderr: "pipe",
  });
  clients.push(client);
  await client.connect(transport);
  return client;
}

const tickets = (subject: string) => desk.tickets.filter((t) => t.subject === subject);

async function until(what: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!what() && Date.now() < end) await new Promise((r) => setTimeout(r, 25));
  expect(what()).toBe(true);
}

beforeAll(async () => {
  await startDesk();
  db = await createTestDatabase();
  dir = await mkdtemp(join(tmpdir(), "tristate-attack22-"));
  // An unsafe tool with no key field and no probe: a lost answer can only be UNKNOWN (a person decides).
  const tool = {
    kind: "unsafe",
    name: "open_ticket",
    description: "Opens a support ticket (no key, no probe).",
    server: { url: deskUrl },
    args: { type: "object", properties: { subject: { type: "string" } }, required: ["subject"] },
    identity: { subject: "trim" },
    timeoutMs: 5000,
  };
  await writeFile(join(dir, "catalog.json"), JSON.stringify({ mcpTools: [tool] }));
  const opened = await openDatabase({ databaseUrl: db.url, poolSize: 1 });
  try {
    keys.acme = (await opened.keys.create({ name: "acme", role: "agent", tenant: "acme" })).secret;
    keys.globex = (await opened.keys.create({ name: "globex", role: "agent", tenant: "globex" })).secret;
  } finally {
    await opened.close();
  }
  await startService();
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await service?.kill();
  await new Promise((r) => deskServer?.close(r));
  await db?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const KILL_POINTS = [
  {
    name: "the request on the wire, never delivered",
    subject: "held",
    arm: () => {
      holding = true;
    },
    reached: () => held > 0,
  },
  {
    name: "the ticket committed, its answer not sent",
    subject: "committed",
    arm: () => {
      desk.answerDelayMs = 3000;
    },
    reached: () => tickets("committed").length > 0,
  },
];

describe("the bridge's repeat after a kill never makes a second effect at a non-deduplicating remote", () => {
  for (const point of KILL_POINTS) {
    it(`killed with ${point.name}`, async () => {
      const client = await bridge(keys.acme);
      const request = {
        name: "open_ticket",
        arguments: { subject: point.subject },
        _meta: { "io.tristate/runId": `run-${point.subject}`, "io.tristate/stepId": "s1" },
      };
      point.arm();
      try {
        const call = client.callTool(request, undefined, { timeout: 60_000 });
        await until(point.reached);
        await service?.kill();
        holding = false;
        desk.answerDelayMs = 0;
        await startService();
        const answer = envelopeOf(await call);
        const made = tickets(point.subject).length;
        console.log(
          `${point.name}: the agent was told ${answer.status} (${answer.resolution ?? "-"}); tickets ${made}`,
        );
        expect(made).toBeLessThanOrEqual(1);
        if (answer.status === "SUCCEEDED") expect(made).toBe(1);
        if (answer.status === "FAILED_NO_EFFECT") expect(made).toBe(0);
        // The agent repeats the call itself: still at most one ticket, never a contradicting verdict.
        const again = envelopeOf(await client.callTool(request, undefined, { timeout: 60_000 }));
        expect(tickets(point.subject).length).toBe(made);
        if (again.status === "SUCCEEDED") expect(made).toBe(1);
        if (again.status === "FAILED_NO_EFFECT") expect(made).toBe(0);
        // Another tenant's bridge, same run and step: its own scope — never acme's record.
        const theirs = envelopeOf(await (await bridge(keys.globex)).callTool(request, undefined, { timeout: 60_000 }));
        expect(theirs.idempotency_key).not.toBe(answer.idempotency_key);
        expect(theirs.replayed).not.toBe(true);
      } finally {
        holding = false;
        desk.answerDelayMs = 0;
      }
    }, 120_000);
  }
});
