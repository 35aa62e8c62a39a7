/**
 * Attack on issue 21 §1 through the service: a tRPC batch (`?batch=1`) holds several calls in one
 * request, and the API key is checked once for all of them. The check is bounded by "the turn" of the
 * request — but `turnOf` (request-body.ts) takes the *first* call's `budgetMs`/`deadlineEpochMs`
 * that names one, not the tightest. With the database stalled, a batch whose first call has a 30 s
 * budget and whose second has 4 s was answered (503, nothing done) after 28 s: the 4 s call's answer
 * comes 26 s after its deadline minus the reserve. The same holds for an MCP JSON-RPC batch
 * (`turnOfMcpBody` in mcp/http.ts: the first `tools/call` naming a deadline). Fixed: the key check
 * of a batch is bounded by its tightest call (a call naming no turn counts with the default budget).
 */
import { DEFAULT_RESERVE_MS } from "@tristate/core";
import { describe, expect, it } from "vitest";
import { STALL_SLACK_MS, useStalledStack } from "./stalled-stack.ts";

const SLACK_MS = STALL_SLACK_MS;
const stack = useStalledStack();

const call = (stepId: string, budgetMs: number) => ({
  runId: "run-batch",
  stepId,
  tool: "issue_refund",
  args: { order_id: `B-${stepId}`, amount: 10, currency: "EUR", reason: "batch" },
  budgetMs,
});

describe("attack 21: a tRPC batch's key check and its tightest call", () => {
  it("a batch [30 s, 4 s] with the database stalled answers by the 4 s call's deadline minus the reserve", async () => {
    const tightMs = 4000;
    stack().proxy.stall();
    const postsBefore = stack().remote.posts;
    const started = performance.now();
    const res = await fetch(`${stack().service.url}/trpc/calls.execute,calls.execute?batch=1`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${stack().agentKey}` },
      body: JSON.stringify({ 0: call("loose", 30_000), 1: call("tight", tightMs) }),
    });
    const tookMs = performance.now() - started;
    await res.text();
    console.log(`batch [30 s, 4 s], database stalled: HTTP ${res.status} after ${Math.round(tookMs)} ms`);
    stack().proxy.resume();
    await new Promise((r) => setTimeout(r, 300));
    expect(stack().remote.posts, "nothing was sent").toBe(postsBefore);
    expect(tookMs).toBeLessThan(tightMs - DEFAULT_RESERVE_MS + SLACK_MS);
  }, 60_000);

  it("an MCP batch [tools/call 30 s, tools/call 4 s] with the database stalled answers by the 4 s call's deadline minus the reserve", async () => {
    const tightMs = 4000;
    stack().proxy.stall();
    const toolsCall = (id: number, budgetMs: number) => ({
      jsonrpc: "2.0",
      id,
      method: "tools/call",
      params: {
        name: "issue_refund",
        arguments: call(`mcp-${id}`, budgetMs).args,
        _meta: { "io.tristate/deadlineEpochMs": Date.now() + budgetMs },
      },
    });
    const started = performance.now();
    const res = await fetch(`${stack().service.url}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${stack().agentKey}`,
      },
      body: JSON.stringify([toolsCall(1, 30_000), toolsCall(2, tightMs)]),
    });
    const tookMs = performance.now() - started;
    await res.text();
    console.log(`MCP batch [30 s, 4 s], database stalled: HTTP ${res.status} after ${Math.round(tookMs)} ms`);
    expect(res.status).toBe(503);
    expect(tookMs).toBeLessThan(tightMs - DEFAULT_RESERVE_MS + SLACK_MS);
  }, 60_000);
});
