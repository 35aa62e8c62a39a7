/**
 * Attack on issue 20 §1 × §3: over MCP without `io.tristate/runId`, the default run is the API key's
 * window (`mcp-<key id>-<window start>`, 2 × TRISTATE_MCP_DEFAULT_SCOPE_MS = two days by default), so every
 * conversation (session) of one key lands in ONE run. An abort is a durable state of a run (rule 13).
 * Aborting the run of one conversation (the operator's "Abort run" on the run the dashboard shows for it)
 * aborts every other conversation of the key for up to two days: their new calls are refused, and their
 * confirmed effects are compensated. Effects counted at the fake remote.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { Deadline } from "@tristate/core";
import { ApiKeyStore, createTestDatabase, type TestDatabase } from "@tristate/db";
import { type FakeRemote, refundTool, startFakeRemote } from "@tristate/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEnv } from "../src/env.ts";
import { type RunningService, startService } from "../src/service.ts";
import { envelopeOf, mcpClient } from "./mcp-support.ts";

let db: TestDatabase;
let remote: FakeRemote;
let service: RunningService;
let agentKey: string;
const clients: Client[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  remote = await startFakeRemote();
  const env = readEnv({
    DATABASE_URL: db.url,
    PORT: "0",
    LOG_LEVEL: "silent",
    TRISTATE_SWEEP_INTERVAL_MS: "0",
    TRISTATE_ROLLUP_INTERVAL_MS: "0",
  });
  service = await startService(env, { tools: [refundTool(remote, { timeoutMs: 15_000 })] });
  const made = await new ApiKeyStore(service.services.store.prisma).create({ name: "support bot", role: "agent" });
  agentKey = made.secret;
}, 60_000);
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await service?.close();
  await remote?.close();
  await db?.drop();
});

const refund = async (client: Client, orderId: string) =>
  envelopeOf(
    await client.callTool({
      name: "issue_refund",
      arguments: { order_id: orderId, amount: "12.50", currency: "EUR" },
    }),
  );

describe("attack 20: aborting one MCP conversation's default-scope run", () => {
  // BUG (design, rule 13 × rule 15): apps/executor/src/mcp/default-scope.ts scopeRuns makes the run
  // `mcp-<key id>-<window>` for every session of the key, so a run abort (core saga.ts abortRun; the
  // claim's run_aborts check, packages/db/src/intent-sql.ts:25) reaches every conversation of that key
  // for the rest of the window (up to 2 days). Fix: keep the key+window as the dedup scope of the
  // step, but do not let a run abort of a default-scope run apply to the whole key silently — e.g.
  // refuse runs.abort / runs.operatorAbort of an `mcp-` default-scope run (ask the client to name its
  // run), or scope the abort to the aborted steps' session/conversation id recorded with each record.
  it("runs.abort refuses a default-scope run (409 naming runId; runs.operatorAbort goes through the same abortInTenant): nothing is recorded, another conversation of the key goes on", async () => {
    const carol = await mcpClient(service.url, agentKey);
    clients.push(carol);
    const first = await refund(carol, "CAROL-1");
    expect(first.status).toBe("SUCCEEDED");
    const reads = service.services.db.reads("default");
    const runId = (await reads.getIntent(first.idempotency_key as string))?.record.runId as string;
    expect(runId).toMatch(/^mcp-/);
    const post = (procedure: string, input: unknown, key: string) =>
      fetch(`${service.url}/trpc/${procedure}`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify(input),
      });
    const refused = await post("runs.abort", { runId, reason: "stop", budgetMs: 8000 }, agentKey);
    expect(refused.status).toBe(409);
    const body = JSON.stringify(await refused.json());
    expect(body).toMatch(/MCP default scope/);
    expect(body).toMatch(/runId/);
    expect(await service.services.tenants.executor("default").store.getRunAbort(runId)).toBeNull();
    const second = await refund(carol, "CAROL-2");
    expect(second.status).toBe("SUCCEEDED");
  });

  // The core's abortRun itself still aborts the whole scope when called directly (the service refuses it).
  it.fails("another conversation of the same key is not aborted by it", async () => {
    const alice = await mcpClient(service.url, agentKey);
    const bob = await mcpClient(service.url, agentKey);
    clients.push(alice, bob);
    const aliceRefund = await refund(alice, "ALICE-1");
    expect(aliceRefund.status).toBe("SUCCEEDED");
    const reads = service.services.db.reads("default");
    const runId = (await reads.getIntent(aliceRefund.idempotency_key as string))?.record.runId as string;
    expect(runId).toMatch(/^mcp-/);

    // The operator aborts Alice's run (what the runs page shows for her conversation).
    await service.services.tenants.executor("default").abortRun(runId, Deadline.after(8_000));

    // Bob, in his own session, asks for his own refund: nothing to do with Alice's abort.
    const bobRefund = await refund(bob, "BOB-7");
    const bobEffects = remote.effects.filter((e) => String(e.body.order_id).toUpperCase() === "BOB-7").length;
    expect({
      status: bobRefund.status,
      code: (bobRefund.error as { code?: string } | undefined)?.code,
      bobEffects,
    }).toEqual({
      status: "SUCCEEDED",
      code: undefined,
      bobEffects: 1,
    });
  });
});
