/**
 * Issue 21 §1, the service layer: a database that stops answering (a TCP proxy between the service
 * and PostgreSQL stops forwarding, connections left open) must not hold the service's answers past
 * the deadline minus the reserve, nor `/readyz` past a second, nor SIGTERM past the grace period.
 */
import { connect } from "node:net";
import { DEFAULT_RESERVE_MS } from "@tristate/core";
import { describe, expect, it } from "vitest";
import { SHUTDOWN_MARGIN_MS } from "../src/shutdown.ts";
import { startServiceProcess } from "./processes.ts";
import { STALL_SLACK_MS, useStalledStack } from "./stalled-stack.ts";

const SLACK_MS = STALL_SLACK_MS;
const stack = useStalledStack();

describe("a stalled database", () => {
  it("/readyz answers 503 within a second, naming the database", async () => {
    expect((await fetch(`${stack().service.url}/readyz`)).status).toBe(200);
    stack().proxy.stall();
    const started = performance.now();
    const res = await fetch(`${stack().service.url}/readyz`);
    const tookMs = performance.now() - started;
    expect(res.status).toBe(503);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/database/);
    expect(tookMs).toBeLessThan(1000);
    console.log(`/readyz with the database stalled: 503 after ${Math.round(tookMs)} ms`);
  });

  it("a key check that cannot finish answers 503 with Retry-After by the budget minus the reserve; nothing sent", async () => {
    const budgetMs = 4000;
    stack().proxy.stall();
    const postsBefore = stack().remote.posts;
    const started = performance.now();
    const res = await stack().execute({ stepId: "key-check", budgetMs });
    const tookMs = performance.now() - started;
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
    const body = (await res.json()) as { error: { message: string } };
    expect(body.error.message).toMatch(/API key could not be checked.*nothing was done/);
    expect(tookMs).toBeLessThan(budgetMs - DEFAULT_RESERVE_MS + SLACK_MS);
    stack().proxy.resume();
    await new Promise((r) => setTimeout(r, 500));
    expect(stack().remote.posts).toBe(postsBefore);
  });
});

describe("MCP with the database stalled", () => {
  it("/mcp: a key check that cannot finish answers 503 with Retry-After by the tools/call deadline minus the reserve", async () => {
    const budgetMs = 4000;
    stack().proxy.stall();
    const started = performance.now();
    const res = await fetch(`${stack().service.url}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${stack().agentKey}`,
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: {
          name: "issue_refund",
          arguments: {},
          _meta: { "io.tristate/deadlineEpochMs": Date.now() + budgetMs },
        },
      }),
    });
    const tookMs = performance.now() - started;
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/nothing was done/);
    expect(tookMs).toBeLessThan(budgetMs - DEFAULT_RESERVE_MS + SLACK_MS);
  });
});

describe("SIGTERM with the database stalled", () => {
  it("the process exits within the grace period plus the margin, and nothing is left listening", async () => {
    const graceMs = 2000;
    const child = await startServiceProcess({
      DATABASE_URL: stack().proxiedUrl,
      TRISTATE_SHUTDOWN_GRACE_MS: String(graceMs),
      TRISTATE_SWEEP_INTERVAL_MS: "200",
      TRISTATE_ROLLUP_INTERVAL_MS: "200",
    });
    try {
      const { port } = new URL(child.url);
      await new Promise((r) => setTimeout(r, 500)); // the sweeper and rollups are now waiting on the database
      stack().proxy.stall();
      // A request in flight, held by its key check on the stalled database.
      const held = fetch(`${child.url}/trpc/calls.execute`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: "Bearer tsk_not_checked_yet_0123456789" },
        body: JSON.stringify({ runId: "r", tool: "issue_refund", args: {}, budgetMs: 60_000 }),
      }).catch(() => null);
      await new Promise((r) => setTimeout(r, 300));
      const started = performance.now();
      const code = await child.stop();
      const tookMs = performance.now() - started;
      await held;
      expect(tookMs).toBeLessThan(graceMs + SHUTDOWN_MARGIN_MS + SLACK_MS);
      expect(code).not.toBeNull();
      const refused = await new Promise<boolean>((resolve) => {
        const socket = connect(Number(port), "127.0.0.1");
        socket.once("connect", () => {
          socket.destroy();
          resolve(false);
        });
        socket.once("error", () => resolve(true));
      });
      expect(refused).toBe(true);
      console.log(`SIGTERM with the database stalled: exited (code ${code}) after ${Math.round(tookMs)} ms`);
    } finally {
      stack().proxy.resume();
      await child.kill();
    }
  }, 30_000);
});
