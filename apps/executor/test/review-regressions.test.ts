/**
 * Findings of an outside review of issues 10–11, each a regression test on the real stack: a session
 * cannot mint the next session; an admin cannot write into a tenant that does not exist (it would be
 * neither swept nor listed); `confirmations.issue` answers another tenant like every procedure does
 * (403 naming `tenant`); one key cannot fill the MCP gateway's sessions for everybody else.
 */
import { ApiKeyStore } from "@tristate/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_SESSIONS_PER_KEY } from "../src/mcp/http.ts";
import { rawInitialize } from "./mcp-support.ts";
import { startStack, type TestStack } from "./support.ts";

let stack: TestStack;
beforeAll(async () => {
  stack = await startStack({ env: { TRISTATE_AUTH_FAILURES: "1000" } });
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

describe("review regressions (issues 10 and 11)", () => {
  it("sessions.create takes the key itself: a session cannot renew itself past its absolute expiry", async () => {
    const made = await stack.post("sessions.create", {}, stack.keys.operator);
    expect(made.status).toBe(200);
    const sessionId = made.json.result.data.sessionId as string;
    const renewed = await stack.post("sessions.create", {}, null, { authorization: `Session ${sessionId}` });
    expect(renewed.status).toBe(403);
    expect(renewed.json.error.message).toMatch(/needs the API key itself/);
    // The session itself still works for what sessions are for.
    const whoami = await fetch(`${stack.service.url}/trpc/auth.whoami`, {
      headers: { authorization: `Session ${sessionId}` },
    });
    expect(whoami.status).toBe(200);
  });

  it("an admin acting in a tenant that has no keys is refused (404 naming tenant); nothing is written", async () => {
    const res = await stack.post(
      "calls.execute",
      {
        runId: "ghost-run",
        stepId: "s1",
        tool: "issue_refund",
        args: { order_id: "G-1", amount: "1.00" },
        tenant: "ghost",
        budgetMs: 5000,
      },
      stack.keys.admin,
    );
    expect(res.status).toBe(404);
    expect(res.json.error.data.field).toBe("tenant");
    const { rows } = await stack.service.services.store.pool.query(
      "SELECT count(*)::int AS n FROM intent_records WHERE tenant = 'ghost'",
    );
    expect(rows[0].n).toBe(0);
    expect(stack.remote.effects).toHaveLength(0);
    // Once a key is made in it, the tenant exists for admins.
    await new ApiKeyStore(stack.service.services.store.prisma).create({ name: "g", role: "agent", tenant: "ghost" });
    const plan = await stack.post(
      "runs.plan",
      { runId: "ghost-run", steps: [{ stepId: "s1", tool: "issue_refund" }], tenant: "ghost" },
      stack.keys.admin,
    );
    expect(plan.status).toBe(200);
  });

  it("confirmations.issue for another tenant: 403 naming tenant, like every procedure", async () => {
    const other = await new ApiKeyStore(stack.service.services.store.prisma).create({
      name: "op b",
      role: "operator",
      tenant: "tb",
    });
    const res = await stack.post(
      "confirmations.issue",
      { runId: "r", stepId: "s", tool: "issue_refund", args: { order_id: "A-1", amount: "1.00" }, tenant: "default" },
      other.secret,
    );
    expect(res.status).toBe(403);
    expect(res.json.error.data.field).toBe("tenant");
  });

  it(`MCP: a key holds at most ${MAX_SESSIONS_PER_KEY} sessions (its oldest ends); another key still gets in`, async () => {
    const auth = `Bearer ${stack.keys.agent}`;
    const first = await rawInitialize(stack.service.url, auth);
    const firstId = first.headers.get("mcp-session-id");
    expect(firstId).toBeTruthy();
    for (let i = 0; i < MAX_SESSIONS_PER_KEY; i++) {
      expect((await rawInitialize(stack.service.url, auth)).status).toBe(200);
    }
    const res = await fetch(`${stack.service.url}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: auth,
        "mcp-session-id": firstId ?? "",
        "mcp-protocol-version": "2025-06-18",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }),
    });
    expect(res.status).toBe(404); // the least recently used session of this key was ended
    const admin = await rawInitialize(stack.service.url, `Bearer ${stack.keys.admin}`);
    expect(admin.status).toBe(200);
  });
});
