/**
 * Tristate in front of an upstream MCP server (issue 11 §3): catalog `mcpTools` pointing at a ticket
 * desk the test starts (Streamable HTTP and stdio), called by the SDK's `Client` through `/mcp` on
 * PostgreSQL. Invariants: effects at the upstream, and what the client was told.
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildCatalog } from "../src/catalog/load.ts";
import { closeMcpUpstreams } from "../src/catalog/mcp-tool.ts";
import { createDesk, startTicketHttpServer, type Ticket, type TicketHttpServer } from "./fixtures/ticket-mcp.ts";
import { envelopeOf, mcpClient, ticketDeclarations } from "./mcp-support.ts";
import { startStack, type TestStack } from "./support.ts";

const fixtures = join(dirname(fileURLToPath(import.meta.url)), "fixtures");
let stack: TestStack;
let desk: TicketHttpServer;
let client: Client;
let stdioDir: string;
const ticketsAbout = (subject: string) => desk.desk.tickets.filter((t) => t.subject === subject);

beforeAll(async () => {
  desk = await startTicketHttpServer(createDesk());
  stdioDir = await mkdtemp(join(tmpdir(), "tristate-mcp-stdio-"));
  const stdio = ticketDeclarations({
    command: process.execPath,
    args: ["--import", "tsx", join(fixtures, "ticket-mcp-stdio.ts")],
    env: { TICKETS_FILE: join(stdioDir, "tickets.json") },
  }).map((d) => ({ ...d, name: `stdio_${d.name}`, tool: d.name }));
  const tools = await buildCatalog({
    mcpTools: [
      ...ticketDeclarations({ url: desk.url }, { timeoutMs: 1000 }),
      ...stdio,
      // An upstream nobody listens on.
      { ...ticketDeclarations({ url: "http://127.0.0.1:9/mcp" })[0], name: "open_ticket_nowhere" },
    ],
  });
  stack = await startStack({ tools: () => tools, env: { TRISTATE_PROBE_SPACING_MS: "300" } });
  client = await mcpClient(stack.service.url, stack.keys.agent);
});
afterAll(async () => {
  await client?.close().catch(() => {});
  await stack?.close();
  await desk?.close();
  if (stdioDir) await rm(stdioDir, { recursive: true, force: true });
});

describe("mcpTools: Tristate in front of an upstream MCP server", () => {
  it("the upstream commits and answers only after the call's timeout: UNKNOWN, its key probe (another upstream tool) finds it, one effect; a repeat replays", async () => {
    desk.desk.answerDelayMs = 2500; // the tool's timeoutMs is 1000
    try {
      const probesBefore = desk.desk.calls.find_ticket_by_ref ?? 0;
      const first = await client.callTool({ name: "open_ticket", arguments: { subject: "late answer" } });
      const envelope = envelopeOf(first);
      expect(envelope).toMatchObject({ status: "SUCCEEDED", resolution: "found", retry_safe: true });
      expect(envelope.result).toMatchObject({ subject: "late answer", ref: envelope.idempotency_key });
      expect(desk.desk.calls.find_ticket_by_ref ?? 0).toBeGreaterThan(probesBefore);
      // The record went through UNKNOWN (read timeout) before the probe settled it.
      const record = (await stack.get("intents.get", { key: envelope.idempotency_key }, stack.keys.viewer)).json.result
        .data;
      const kinds = JSON.stringify(record.events ?? record);
      expect(kinds).toMatch(/READ_TIMEOUT/);
      expect(ticketsAbout("late answer")).toHaveLength(1);
      const again = await client.callTool({ name: "open_ticket", arguments: { subject: "late answer" } });
      expect(envelopeOf(again)).toMatchObject({ status: "SUCCEEDED", replayed: true });
      await new Promise((r) => setTimeout(r, 1600)); // the upstream's late answer arrives: still one ticket
      expect(ticketsAbout("late answer")).toHaveLength(1);
    } finally {
      desk.desk.answerDelayMs = 0;
    }
  });

  it("an upstream error result after the tool ran is no proof of no effect: UNKNOWN, then the probe finds the ticket", async () => {
    const res = await client.callTool({ name: "open_ticket_flaky", arguments: { subject: "flaky desk" } });
    expect(envelopeOf(res)).toMatchObject({ status: "SUCCEEDED", resolution: "found" });
    expect(ticketsAbout("flaky desk")).toHaveLength(1);
    const again = await client.callTool({ name: "open_ticket_flaky", arguments: { subject: "flaky desk" } });
    expect(envelopeOf(again)).toMatchObject({ status: "SUCCEEDED", replayed: true });
    expect(ticketsAbout("flaky desk")).toHaveLength(1);
  });

  it("the upstream's -32602 refusal of the arguments before its tool ran is FAILED_NO_EFFECT (isError, retry_safe)", async () => {
    const subject = "x".repeat(80); // the desk allows at most 60 characters; the catalog does not know
    const res = await client.callTool({ name: "open_ticket", arguments: { subject } });
    expect(res.isError).toBe(true);
    expect(envelopeOf(res)).toMatchObject({ status: "FAILED_NO_EFFECT", retry_safe: true });
    expect(envelopeOf(res).error.code).toBe("REJECTED");
    expect(ticketsAbout(subject)).toHaveLength(0);
  });

  it("an upstream that cannot be reached: FAILED_NO_EFFECT NOT_SENT, safe to try again", async () => {
    const res = await client.callTool({ name: "open_ticket_nowhere", arguments: { subject: "nobody home" } });
    expect(res.isError).toBe(true);
    expect(envelopeOf(res)).toMatchObject({ status: "FAILED_NO_EFFECT", retry_safe: true });
    expect(envelopeOf(res).error.code).toBe("NOT_SENT");
  });

  it("a stdio upstream (a child process): one effect, the repeat replays", async () => {
    const first = envelopeOf(await client.callTool({ name: "stdio_open_ticket", arguments: { subject: "via stdio" } }));
    expect(first).toMatchObject({ status: "SUCCEEDED", replayed: false });
    const again = envelopeOf(await client.callTool({ name: "stdio_open_ticket", arguments: { subject: "via stdio" } }));
    expect(again).toMatchObject({ status: "SUCCEEDED", replayed: true });
    const tickets = JSON.parse(await readFile(join(stdioDir, "tickets.json"), "utf8")) as Ticket[];
    expect(tickets.filter((t) => t.subject === "via stdio")).toHaveLength(1);
    expect(tickets[0]?.ref).toBe(first.idempotency_key);
  });

  it("catalog validation names the tool and the field", async () => {
    const base = ticketDeclarations({ url: desk.url })[0];
    const bad = async (over: Record<string, unknown>) =>
      buildCatalog({ mcpTools: [{ ...base, ...over }] }).then(closeMcpUpstreams, (e: Error) => e.message);
    expect(await bad({ server: { url: "ftp://x" } })).toMatch(/tool "open_ticket": server/);
    expect(await bad({ keyField: "subject" })).toMatch(/keyField: "subject" is a declared argument/);
    expect(await bad({ kind: "idempotent_by_key", keyField: undefined, keyProbe: undefined })).toMatch(
      /keyField: is required for an idempotent_by_key tool/,
    );
    expect(
      await bad({
        keyProbe: { tool: "find_ticket_by_ref", args: { ref: "{args.nope}" }, found: { type: "not_null" } },
      }),
    ).toMatch(/keyProbe\.args\.ref: \{args\.nope\} is not \{key\}/);
    expect(await bad({ identity: { nope: "trim" } })).toMatch(/identity\.nope: is not an argument field/);
    expect(await bad({ errorResults: "maybe" })).toMatch(/errorResults/);
  });
});
