/**
 * Issue 20 §3 (rule 15) on the service's two doors: a refund over HTTP (`calls.execute`) or MCP
 * (`tools/call`, with `_meta` ids or the default scope), its record moved to the archive by the
 * archiver, then the same call again: a replay and one effect at the remote; another identity in the
 * same step: a conflict, nothing sent; the operator sees one record of the step.
 */
import { archiveIntents } from "@tristate/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { envelopeOf, mcpClient } from "./mcp-support.ts";
import { startStack, type TestStack } from "./support.ts";

let stack: TestStack;
beforeAll(async () => {
  stack = await startStack({ env: { TRISTATE_ROLLUP_INTERVAL_MS: "0" } });
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

/** Moves every settled record to the archive (the archiver itself, its cut in the future). */
async function archiveAll(): Promise<number> {
  const prisma = stack.service.services.store.prisma;
  return (await archiveIntents(prisma, { olderThanEpochMs: Date.now() + 3_600_000 })).moved;
}
const effectsOf = (orderId: string) =>
  stack.remote.effects.filter((e) => String(e.body.order_id).toUpperCase() === orderId).length;
const refundArgs = (orderId: string, amount = "20.00") => ({ order_id: orderId, amount, currency: "EUR" });

describe("an archived step still deduplicates over HTTP and MCP (rule 15)", () => {
  it("calls.execute: the repeat of an archived refund replays it, another identity is a conflict; one effect", async () => {
    const execute = (args: Record<string, unknown>) =>
      stack.post("calls.execute", { runId: "run-http-arch", stepId: "refund", tool: "issue_refund", args });
    const first = (await execute(refundArgs("H-1"))).json.result.data;
    expect(first).toMatchObject({ status: "SUCCEEDED", replayed: false });
    expect(await archiveAll()).toBeGreaterThan(0);
    const repeat = (await execute(refundArgs("h-1"))).json.result.data;
    expect(repeat).toMatchObject({ status: "SUCCEEDED", replayed: true, idempotency_key: first.idempotency_key });
    await archiveAll();
    const other = (await execute(refundArgs("H-1", "5.00"))).json.result.data;
    expect(other).toMatchObject({ status: "FAILED_NO_EFFECT", retry_safe: false });
    expect(other.error.code).toBe("IDEMPOTENCY_CONFLICT");
    expect(effectsOf("H-1")).toBe(1);
    // What the operator sees: one record of the run, the first, SUCCEEDED.
    const run = (await stack.get("runs.get", { runId: "run-http-arch" })).json.result.data;
    expect(run.records.map((r: { key: string; status: string }) => [r.key, r.status])).toEqual([
      [first.idempotency_key, "SUCCEEDED"],
    ]);
  });

  it("MCP tools/call, with _meta ids and with the default scope: the repeat of an archived refund replays it; one effect each", async () => {
    const client = await mcpClient(stack.service.url, stack.keys.agent);
    try {
      const meta = { "io.tristate/runId": "run-mcp-arch", "io.tristate/stepId": "refund" };
      const named = envelopeOf(
        await client.callTool({ name: "issue_refund", arguments: refundArgs("M-1"), _meta: meta }),
      );
      const scoped = envelopeOf(await client.callTool({ name: "issue_refund", arguments: refundArgs("M-2") }));
      expect([named.status, scoped.status]).toEqual(["SUCCEEDED", "SUCCEEDED"]);
      expect(await archiveAll()).toBeGreaterThanOrEqual(2);
      const namedAgain = envelopeOf(
        await client.callTool({ name: "issue_refund", arguments: refundArgs("M-1"), _meta: meta }),
      );
      const scopedAgain = envelopeOf(await client.callTool({ name: "issue_refund", arguments: refundArgs("M-2") }));
      expect(namedAgain).toMatchObject({ status: "SUCCEEDED", replayed: true, idempotency_key: named.idempotency_key });
      expect(scopedAgain).toMatchObject({
        status: "SUCCEEDED",
        replayed: true,
        idempotency_key: scoped.idempotency_key,
      });
      await archiveAll();
      const other = await client.callTool({ name: "issue_refund", arguments: refundArgs("M-1", "1.00"), _meta: meta });
      expect(other.isError).toBe(true);
      expect(envelopeOf(other).error.code).toBe("IDEMPOTENCY_CONFLICT");
      expect([effectsOf("M-1"), effectsOf("M-2")]).toEqual([1, 1]);
    } finally {
      await client.close();
    }
  });
});
