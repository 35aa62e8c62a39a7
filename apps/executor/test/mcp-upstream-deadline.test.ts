/**
 * Issue 21 §1, transports: an MCP upstream tool never sends `tools/call` once the call's deadline has
 * passed, even when its own waits (connecting and initialising the upstream session) outlast it. The
 * issue's reproduction: the claim was held up 3 s with a 1.5 s deadline, and the upstream's tools/call
 * went out 1.4 s after the deadline and answered SUCCEEDED. Counted at the fake upstream.
 */
import { type AnyTool, Deadline, isNotSentError } from "@tristate/core";
import { startTcpProxy, type TcpProxy } from "@tristate/testing/tcp-proxy";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeMcpUpstreams } from "../src/catalog/mcp-tool.ts";
import { createDesk, startTicketHttpServer, type TicketHttpServer } from "./fixtures/ticket-mcp.ts";
import { ticketTools } from "./mcp-support.ts";

let desk: TicketHttpServer;
let proxy: TcpProxy;
let tools: AnyTool[];

beforeAll(async () => {
  desk = await startTicketHttpServer(createDesk());
  const url = new URL(desk.url);
  proxy = await startTcpProxy({ targetPort: Number(url.port) });
  url.host = `127.0.0.1:${proxy.port}`;
  tools = await ticketTools({ url: url.toString() });
});
afterAll(async () => {
  proxy?.resume();
  await closeMcpUpstreams(tools ?? []);
  await proxy?.close();
  await desk?.close();
});

const openTicket = () => {
  const tool = tools.find((t) => t.name === "open_ticket");
  if (!tool) throw new Error("open_ticket missing from the catalog");
  return tool;
};

describe("an MCP upstream tool and the call's deadline", () => {
  it("the session's set-up outlasts the deadline: tools/call is never sent, NotSentError DEADLINE_EXCEEDED", async () => {
    const deadline = Deadline.after(500);
    // The upstream is unreachable past the deadline (connections held open, nothing forwarded).
    proxy.stall();
    const resumed = new Promise((r) => setTimeout(r, 1500)).then(() => proxy.resume());
    const invoked = openTicket().invoke(
      { subject: "late set-up" },
      {
        idempotencyKey: "k".repeat(32),
        // A signal that never aborts: the deadline alone must stop the send.
        signal: new AbortController().signal,
        timeoutMs: 10_000,
        deadline,
        attempt: 1,
      },
    );
    const error = await invoked.then(
      () => null,
      (e: unknown) => e,
    );
    await resumed;
    expect(isNotSentError(error)).toBe(true);
    expect((error as { code?: string }).code).toBe("DEADLINE_EXCEEDED");
    await new Promise((r) => setTimeout(r, 500));
    expect(desk.desk.calls.open_ticket ?? 0).toBe(0);
    expect(desk.desk.tickets).toHaveLength(0);
  });

  it("with time left, the same tool sends (the check refuses only when the time is gone)", async () => {
    const result = await openTicket().invoke(
      { subject: "in time" },
      {
        idempotencyKey: "m".repeat(32),
        signal: new AbortController().signal,
        timeoutMs: 5000,
        deadline: Deadline.after(10_000),
        attempt: 1,
      },
    );
    expect(result).toMatchObject({ ticket: { subject: "in time" } });
    expect(desk.desk.calls.open_ticket).toBe(1);
  });
});
