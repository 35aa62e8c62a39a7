/**
 * The envelope of a call whose remote is down says so (issue 22 §5): a remote that refuses the
 * connection (nothing listens on its port — `npm start`'s example remotes stopped) answers
 * FAILED_NO_EFFECT `NOT_SENT` whose reason names the remote's host:port and that nothing was sent,
 * for a declarative HTTP tool and for a tool in front of an MCP server alike.
 */
import { createServer } from "node:net";
import { createExecutor, Deadline, MemoryIntentStore } from "@tristate/core";
import { describe, expect, it } from "vitest";
import { buildCatalog } from "../src/catalog/load.ts";
import { ticketDeclarations } from "./mcp-support.ts";

/** A loopback port nothing listens on now. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

async function callOnce(catalog: Parameters<typeof buildCatalog>[0], tool: string, args: Record<string, unknown>) {
  const tools = await buildCatalog(catalog);
  const executor = createExecutor({
    store: new MemoryIntentStore(),
    tools,
    probe: { attempts: 1, spacingMs: 0, timeoutMs: 500 },
  });
  return executor.call({ runId: "remote-down", stepId: tool, tool, args, deadline: Deadline.after(10_000) });
}

describe("a remote that refuses the connection", () => {
  it("an HTTP tool: FAILED_NO_EFFECT NOT_SENT, the reason naming host:port and that nothing was sent", async () => {
    const port = await closedPort();
    const envelope = await callOnce(
      {
        httpTools: [
          {
            name: "notify",
            kind: "unsafe",
            method: "POST",
            url: `http://127.0.0.1:${port}/notify`,
            args: [{ name: "campaign", type: "string" }],
            identity: { campaign: "exact" },
            timeoutMs: 1500,
          },
        ],
      },
      "notify",
      { campaign: "spring" },
    );
    expect(envelope).toMatchObject({ status: "FAILED_NO_EFFECT", retry_safe: true, error: { code: "NOT_SENT" } });
    expect(envelope.error?.message).toContain(`127.0.0.1:${port} refused the connection; nothing was sent`);
  });

  it("a tool in front of an MCP server: NOT_SENT naming the server's URL and that nothing was sent", async () => {
    const port = await closedPort();
    const envelope = await callOnce(
      { mcpTools: ticketDeclarations({ url: `http://127.0.0.1:${port}/mcp` }) },
      "open_ticket",
      { subject: "nobody home" },
    );
    expect(envelope).toMatchObject({ status: "FAILED_NO_EFFECT", error: { code: "NOT_SENT" } });
    expect(envelope.error?.message).toMatch(
      new RegExp(`MCP server http://127\\.0\\.0\\.1:${port}/mcp: cannot connect .*; nothing was sent`),
    );
  });
});
