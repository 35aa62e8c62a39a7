/**
 * Issue 20 §2, "a confirmation confirms what the person saw", on PostgreSQL through the real service:
 * a payout confirmed for order P-7, 5,000.00, to account …0001 is not confirmed to …9999 (a field
 * outside the identity). Every transport that carries a token — `calls.execute` over HTTP and MCP
 * `tools/call` with `_meta` — is refused before sending, naming the argument, never its value; the
 * effects are counted at the remote; what the operator reads shows no record of the refused call.
 */
import { type AnyTool, callHttp, canon, defineTool } from "@tristate/core";
import type { FakeRemote } from "@tristate/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { envelopeOf, mcpClient } from "./mcp-support.ts";
import { type Json, startStack, type TestStack } from "./support.ts";

const ACCOUNT_SHOWN = "DE89370400440532010001";
const ACCOUNT_OTHER = "DE89370400440532019999";

/** `pay_out`: identity = order and amount; the account is a secret argument outside the identity. */
function payoutTool(remote: FakeRemote): AnyTool {
  return defineTool({
    name: "pay_out",
    kind: "idempotent_by_key",
    args: z.object({
      order_id: z.string().min(1),
      amount: z.union([z.number(), z.string()]),
      currency: z.string().length(3).default("EUR"),
      account: z.string().min(8),
    }),
    identity: { order_id: canon.upper, amount: canon.decimal(2) },
    secretFields: ["account"],
    timeoutMs: 1000,
    confirmation: (a) => (Number(a.amount) > 1000 ? "payouts over 1,000.00 need confirmation" : false),
    invoke: async (args, ctx) =>
      (await callHttp(ctx, { method: "POST", url: `${remote.url}/effects`, body: args })).body,
    probe: async (_a, ctx) => {
      const res = await callHttp(ctx, {
        method: "GET",
        url: `${remote.url}/effects?clientRef=${encodeURIComponent(ctx.clientRef)}`,
      });
      return (res.body as unknown[])[0] ?? null;
    },
  });
}

let stack: TestStack;
beforeAll(async () => {
  stack = await startStack({ tools: (remote) => [payoutTool(remote)] });
});
afterAll(async () => {
  await stack?.close();
});

const shown = { order_id: "P-7", amount: "5000.00", account: ACCOUNT_SHOWN };
const issue = async (target: { runId: string; stepId: string; tool?: string; args?: unknown }, key?: string) =>
  stack.post("confirmations.issue", { tool: "pay_out", args: shown, ...target }, key ?? stack.keys.operator);
const paidTo = () => stack.remote.effects.map((e) => e.body.account);

/** The refusal the agent reads: nothing sent, the argument named, no value of it printed. */
function expectArgumentRefused(envelope: Json, field: string) {
  expect(envelope).toMatchObject({
    status: "FAILED_NO_EFFECT",
    retry_safe: true,
    error: { code: "CONFIRMATION_REQUIRED", field: `args.${field}` },
  });
  expect(envelope.error.message).toContain(`confirmed other values of: ${field}`);
  expect(envelope.message).toContain(field);
  expect(JSON.stringify(envelope)).not.toMatch(/0001|9999/);
}

describe("a confirmation token confirms every argument shown, on PostgreSQL", () => {
  it("calls.execute: the token for …0001 does not pay …9999 (refused, nothing sent or recorded); the confirmed call pays once", async () => {
    const runId = "run-payout";
    const issued = await issue({ runId, stepId: "payout" });
    expect(issued.status).toBe(200);
    const answer = issued.json.result.data;
    // The operator is told what the token confirms: the call, and the arguments with the account masked.
    expect(answer.confirms).toEqual({
      tenant: "default",
      runId,
      stepId: "payout",
      tool: "pay_out",
      args: { order_id: "P-7", amount: "5000.00", currency: "EUR", account: "***0001" },
    });
    expect(JSON.stringify(answer)).not.toContain(ACCOUNT_SHOWN);
    const token = answer.token as string;
    expect(token.length).toBeLessThan(400);

    // A resumed run calls the same step with the same token and another account.
    const call = { runId, stepId: "payout", tool: "pay_out", budgetMs: 10_000, confirmationToken: token };
    const diverted = await stack.post("calls.execute", { ...call, args: { ...shown, account: ACCOUNT_OTHER } });
    expect(diverted.status).toBe(200);
    expectArgumentRefused(diverted.json.result.data, "account");
    expect(diverted.json.result.data.idempotency_key).toBe(answer.idempotencyKey); // same key: identity unchanged
    expect(stack.remote.posts).toBe(0);
    // The operator's reads: no record of the refused call.
    const run = await stack.get("runs.get", { runId }, stack.keys.operator);
    expect(run.json.result?.data?.records ?? []).toHaveLength(0);

    // Two arguments changed: both named.
    const two = await stack.post("calls.execute", {
      ...call,
      args: { ...shown, account: ACCOUNT_OTHER, currency: "USD" },
    });
    expectArgumentRefused(two.json.result.data, "account");
    expect(two.json.result.data.error.message).toContain("account, currency");

    // The confirmed call, its keys in another order and the amount as a number, pays once to …0001.
    const ok = await stack.post("calls.execute", {
      ...call,
      args: { account: ACCOUNT_SHOWN, currency: "EUR", amount: 5000, order_id: "p-7" },
    });
    expect(ok.json.result.data).toMatchObject({ status: "SUCCEEDED", idempotency_key: answer.idempotencyKey });
    expect(paidTo()).toEqual([ACCOUNT_SHOWN]);
    // A repeat with the other account replays the payout; it never pays …9999.
    const again = await stack.post("calls.execute", { ...call, args: { ...shown, account: ACCOUNT_OTHER } });
    expect(again.json.result.data).toMatchObject({ status: "SUCCEEDED", replayed: true });
    expect(paidTo()).toEqual([ACCOUNT_SHOWN]);
  });

  it("tokens for another step or run, forged or malformed ones are refused as before; admins read the account in clear; agents cannot issue", async () => {
    const runId = "run-payout-2";
    const call = { runId, stepId: "payout", tool: "pay_out", args: shown, budgetMs: 10_000 };
    const before = stack.remote.posts;
    const otherStep = (await issue({ runId, stepId: "payout-b" })).json.result.data.token;
    const otherRun = (await issue({ runId: "run-elsewhere", stepId: "payout" })).json.result.data.token;
    const right = (await issue({ runId, stepId: "payout" })).json.result.data.token as string;
    const forged = `${right.slice(0, -4)}AAAA`;
    for (const confirmationToken of [otherStep, otherRun, forged, "not-a-token"]) {
      const res = await stack.post("calls.execute", { ...call, confirmationToken });
      expect(res.json.result.data).toMatchObject({
        status: "FAILED_NO_EFFECT",
        error: { code: "CONFIRMATION_REQUIRED", field: "confirmationToken" },
      });
    }
    expect(stack.remote.posts).toBe(before);
    expect((await issue({ runId, stepId: "payout" }, stack.keys.agent)).status).toBe(403);
    expect((await issue({ runId, stepId: "payout" }, stack.keys.viewer)).status).toBe(403);
    // The preview the dashboard shows before issuing answers what the token will confirm, masked alike.
    const target = { runId, stepId: "payout", tool: "pay_out", args: shown };
    const preview = await stack.get("confirmations.preview", target, stack.keys.operator);
    expect(preview.json.result.data.confirms).toEqual(
      (await issue({ runId, stepId: "payout" })).json.result.data.confirms,
    );
    expect(preview.json.result.data.confirms.args.account).toBe("***0001");
    expect((await stack.get("confirmations.preview", target, stack.keys.viewer)).status).toBe(403);
    const admin = await issue({ runId, stepId: "payout" }, stack.keys.admin);
    expect(admin.json.result.data.confirms.args.account).toBe(ACCOUNT_SHOWN);
    const bad = await issue({ runId, stepId: "payout", args: { ...shown, amount: "lots" } });
    expect(bad.status).toBe(400);
    expect(bad.json.error.data).toMatchObject({ field: "args.amount" });
  });

  it("after a FAILED_NO_EFFECT the new attempt sends the new arguments: the token for …0001 does not send …9999 either", async () => {
    const runId = "run-payout-retry";
    const token = (await issue({ runId, stepId: "payout" })).json.result.data.token;
    const call = { runId, stepId: "payout", tool: "pay_out", budgetMs: 10_000, confirmationToken: token };
    const before = { posts: stack.remote.posts, effects: stack.remote.effects.length };
    stack.remote.fault({ commit: false, answer: 422 });
    const declined = await stack.post("calls.execute", { ...call, args: shown });
    expect(declined.json.result.data).toMatchObject({ status: "FAILED_NO_EFFECT", retry_safe: true });
    expect(stack.remote.posts).toBe(before.posts + 1);
    const diverted = await stack.post("calls.execute", { ...call, args: { ...shown, account: ACCOUNT_OTHER } });
    expectArgumentRefused(diverted.json.result.data, "account");
    expect(stack.remote.posts).toBe(before.posts + 1); // nothing reached the remote
    // The operator still reads the first attempt's FAILED_NO_EFFECT, not a second attempt.
    const record = await stack.get(
      "intents.get",
      { key: declined.json.result.data.idempotency_key },
      stack.keys.operator,
    );
    expect(record.json.result.data.record).toMatchObject({ status: "FAILED_NO_EFFECT", attempt: 1 });
    const retried = await stack.post("calls.execute", { ...call, args: shown });
    expect(retried.json.result.data).toMatchObject({ status: "SUCCEEDED", attempt: 2 });
    expect(stack.remote.effects.slice(before.effects).map((e) => e.body.account)).toEqual([ACCOUNT_SHOWN]);
  });

  it("MCP tools/call with _meta: the same check — refused naming the argument, nothing sent; the confirmed arguments pay once", async () => {
    const runId = "run-payout-mcp";
    const token = (await issue({ runId, stepId: "payout" })).json.result.data.token;
    const client = await mcpClient(stack.service.url, stack.keys.agent);
    try {
      const meta = {
        "io.tristate/runId": runId,
        "io.tristate/stepId": "payout",
        "io.tristate/confirmationToken": token,
      };
      const before = { posts: stack.remote.posts, effects: stack.remote.effects.length };
      const diverted = await client.callTool({
        name: "pay_out",
        arguments: { ...shown, account: ACCOUNT_OTHER },
        _meta: meta,
      });
      expect(diverted.isError).toBe(true);
      expectArgumentRefused(envelopeOf(diverted), "account");
      expect(stack.remote.posts).toBe(before.posts);
      const ok = await client.callTool({ name: "pay_out", arguments: shown, _meta: meta });
      expect(envelopeOf(ok)).toMatchObject({ status: "SUCCEEDED" });
      expect(stack.remote.effects.slice(before.effects).map((e) => e.body.account)).toEqual([ACCOUNT_SHOWN]);
    } finally {
      await client.close();
    }
  });
});
