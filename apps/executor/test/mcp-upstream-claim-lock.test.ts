/**
 * Issue 21 §1, the reproduction through the service: a call's claim is held up by a lock on the
 * intent log past the call's deadline. The fault review saw the upstream's tools/call sent 1.4 s after
 * the deadline and answered SUCCEEDED. Now the call answers by its deadline minus the reserve, and the
 * upstream never receives tools/call after the deadline — not even once the lock is released and the
 * claim lands. Counted at the fake upstream.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { DEFAULT_RESERVE_MS } from "@tristate/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeMcpUpstreams } from "../src/catalog/mcp-tool.ts";
import { createDesk, startTicketHttpServer, type TicketHttpServer } from "./fixtures/ticket-mcp.ts";
import { envelopeOf, mcpClient, ticketTools } from "./mcp-support.ts";
import { startStack, type TestStack } from "./support.ts";

/** Slack for a loaded 2-core machine, ms. */
const SLACK_MS = 500;

let desk: TicketHttpServer;
let stack: TestStack;
let client: Client;
let tools: Awaited<ReturnType<typeof ticketTools>>;

beforeAll(async () => {
  desk = await startTicketHttpServer(createDesk());
  tools = await ticketTools({ url: desk.url });
  stack = await startStack({ tools: () => tools });
  client = await mcpClient(stack.service.url, stack.keys.agent);
});
afterAll(async () => {
  await client?.close().catch(() => {});
  await stack?.close();
  await closeMcpUpstreams(tools ?? []);
  await desk?.close();
});

describe("a claim held up by a lock past the deadline", () => {
  it("answers by the deadline minus the reserve; the upstream never receives tools/call after the deadline", async () => {
    const budgetMs = 3500; // 1.5 s after the reserve: enough to start a call
    const lockMs = 5000;
    // One connection of the service's own pool holds the lock (the test's way into the tables).
    const locker = await stack.service.services.store.pool.connect();
    try {
      await locker.query("BEGIN");
      await locker.query("LOCK TABLE intent_records IN ACCESS EXCLUSIVE MODE");
      const released = new Promise((r) => setTimeout(r, lockMs)).then(() => locker.query("COMMIT"));
      const deadlineEpochMs = Date.now() + budgetMs;
      const started = performance.now();
      const result = await client.callTool({
        name: "open_ticket",
        arguments: { subject: "claim held up" },
        _meta: {
          "io.tristate/runId": "run-lock",
          "io.tristate/stepId": "step-1",
          "io.tristate/deadlineEpochMs": deadlineEpochMs,
        },
      });
      const tookMs = performance.now() - started;
      const envelope = envelopeOf(result);
      expect(tookMs).toBeLessThan(budgetMs - DEFAULT_RESERVE_MS + SLACK_MS);
      expect(envelope.status).not.toBe("SUCCEEDED");
      await released;
      // The claim lands now; the turn has ended, so nothing may be sent for it.
      await new Promise((r) => setTimeout(r, 2000));
      expect(desk.desk.calls.open_ticket ?? 0).toBe(0);
      expect(desk.desk.tickets).toHaveLength(0);
      console.log(`claim held ${lockMs} ms, budget ${budgetMs} ms: ${envelope.status} after ${Math.round(tookMs)} ms`);
    } finally {
      locker.release();
    }
  }, 30_000);
});
