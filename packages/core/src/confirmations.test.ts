import { startTripServices, type TripServices, tripTools } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { canon } from "./canon.ts";
import { type ConfirmationSubject, canonicalArguments } from "./confirmation-subject.ts";
import { createConfirmationTokens } from "./confirmations.ts";
import { Deadline } from "./deadline.ts";
import { createExecutor, type Executor } from "./executor.ts";
import { MemoryIntentStore } from "./memory-intent-store.ts";
import { defineTool } from "./tool.ts";

const turn = () => Deadline.after(5_000);
const NOW = 1_767_225_600_000;
const SECRET = "0123456789abcdef";

const payoutSpec = {
  identity: { order_id: canon.upper, amount: canon.decimal(2) },
};
const subject = (args: Record<string, unknown>, over: Partial<ConfirmationSubject> = {}): ConfirmationSubject => ({
  tenant: "default",
  runId: "run-1",
  stepId: "payout",
  tool: "pay_out",
  idempotencyKey: "k".repeat(32),
  args: canonicalArguments(payoutSpec, args),
  ...over,
});
const SHOWN = { order_id: "P-7", amount: "5000.00", account: "DE00000000000000000001", memo: { a: 1, b: [1, 2] } };

describe("confirmation tokens (confirmations.ts, confirmation-subject.ts)", () => {
  it("confirm one call and every argument shown: key order, number form and identity canonical form do not count", () => {
    const tokens = createConfirmationTokens(SECRET);
    const token = tokens.issue(subject(SHOWN), NOW, 60_000);
    expect(token).toMatch(/^ct2\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(token.length).toBeLessThan(400);
    // Nothing of the argument values travels in the token (keyed tags only).
    const payload = Buffer.from(token.split(".")[1]!, "base64url").toString("utf8");
    expect(payload).not.toMatch(/0001|5000|P-7/);
    expect(tokens.verify(token, subject(SHOWN), NOW + 59_999)).toEqual({ ok: true });
    const same = { memo: { b: [1.0, 2], a: 1 }, account: "DE00000000000000000001", amount: 5000, order_id: "p-7" };
    expect(tokens.verify(token, subject(same), NOW)).toEqual({ ok: true });
  });

  it("refuse any other value, naming the arguments (added or left out too), and other calls, expiry and forgeries", () => {
    const tokens = createConfirmationTokens(SECRET);
    const token = tokens.issue(subject(SHOWN), NOW, 60_000);
    const verify = (args: Record<string, unknown>, over: Partial<ConfirmationSubject> = {}, now = NOW) =>
      tokens.verify(token, subject(args, over), now);
    expect(verify({ ...SHOWN, account: "DE00000000000000009999" })).toEqual({
      ok: false,
      reason: "arguments_differ",
      fields: ["account"],
    });
    expect(verify({ ...SHOWN, memo: { a: 1, b: [2, 1] }, amount: "5000.01" })).toMatchObject({
      fields: ["amount", "memo"],
    });
    const { memo: _memo, ...withoutMemo } = SHOWN;
    expect(verify(withoutMemo)).toMatchObject({ reason: "arguments_differ", fields: ["memo"] });
    expect(verify({ ...SHOWN, note: "extra" })).toMatchObject({ reason: "arguments_differ", fields: ["note"] });
    for (const over of [{ tool: "other" }, { runId: "run-2" }, { stepId: "s2" }, { tenant: "acme" }]) {
      expect(verify(SHOWN, over)).toMatchObject({ ok: false, reason: "another_call" });
    }
    expect(verify(SHOWN, { idempotencyKey: "j".repeat(32) })).toMatchObject({ reason: "another_call" });
    expect(verify(SHOWN, {}, NOW + 60_000)).toMatchObject({ reason: "expired" });
    const [prefix, payload, mac] = token.split(".");
    const longer = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload!, "base64url").toString()), e: NOW + 3_600_000 }),
    ).toString("base64url");
    expect(tokens.verify(`${prefix}.${longer}.${mac}`, subject(SHOWN), NOW)).toMatchObject({ reason: "forged" });
    expect(createConfirmationTokens("fedcba9876543210").verify(token, subject(SHOWN), NOW)).toMatchObject({
      reason: "forged",
    });
    expect(tokens.verify("garbage", subject(SHOWN), NOW)).toMatchObject({ reason: "malformed" });
    // A token of the old key-only format confirms nothing now.
    expect(tokens.verify(`${NOW + 60_000}.${mac}`, subject(SHOWN), NOW)).toMatchObject({ reason: "malformed" });
    expect(() => createConfirmationTokens("short")).toThrow(TypeError);
    expect(() => tokens.issue(subject(SHOWN), NOW, 0)).toThrow(TypeError);
  });
});

describe("the confirmation policy on the call path (policies.ts, confirmation-policy.ts)", () => {
  let services: TripServices;
  let store: MemoryIntentStore;
  const tokens = createConfirmationTokens(SECRET);
  beforeEach(async () => {
    services = await startTripServices();
    store = new MemoryIntentStore();
  });
  afterEach(async () => {
    await services.close();
  });
  const executor = (): Executor =>
    createExecutor({
      store,
      tools: tripTools(services),
      probe: { spacingMs: 0, timeoutMs: 500 },
      reserveMs: 100,
      minCallBudgetMs: 100,
      confirmations: tokens,
    });
  const confirm = (ex: Executor, input: Parameters<Executor["confirmationFor"]>[0]) =>
    tokens.issue(ex.confirmationFor(input).subject, Date.now());

  it("refused without a token (nothing written), proceeds with one, a repeat replays", async () => {
    const ex = executor();
    const input = { runId: "run-1", stepId: "refund", tool: "issue_refund", args: { order_id: "A-9", amount: 100.01 } };
    const key = ex.keyFor(input);
    expect(await ex.call({ ...input, deadline: turn() })).toMatchObject({
      status: "FAILED_NO_EFFECT",
      error: { code: "CONFIRMATION_REQUIRED", field: "confirmationToken" },
    });
    expect(await store.get(key)).toBeNull();
    // Exactly 100.00 is not over the threshold.
    const under = {
      runId: "run-1",
      stepId: "refund-100",
      tool: "issue_refund",
      args: { order_id: "A-9", amount: "100.00" },
    };
    expect(await ex.call({ ...under, deadline: turn() })).toMatchObject({ status: "SUCCEEDED" });
    const ok = await ex.call({ ...input, deadline: turn(), confirmationToken: confirm(ex, input) });
    expect(ok).toMatchObject({ status: "SUCCEEDED", idempotency_key: key });
    expect(await ex.call({ ...input, deadline: turn() })).toMatchObject({ status: "SUCCEEDED", replayed: true });
    expect(services.posts.refunds).toBe(2);
    expect(() => ex.keyFor({ ...input, tool: "nope" })).toThrow(TypeError);
    expect(() => ex.confirmationFor({ ...input, args: { order_id: "A-9" } })).toThrow(/confirmationFor: args.amount/);
  });

  it("a token for other values of a non-identity argument is refused before sending, naming it", async () => {
    const ex = executor();
    const shown = { runId: "run-1", stepId: "refund", tool: "issue_refund", args: { order_id: "A-9", amount: 500 } };
    const token = confirm(ex, shown);
    const changed = { ...shown, args: { ...shown.args, currency: "USD" } };
    const refused = await ex.call({ ...changed, deadline: turn(), confirmationToken: token });
    expect(refused).toMatchObject({
      status: "FAILED_NO_EFFECT",
      retry_safe: true,
      error: { code: "CONFIRMATION_REQUIRED", field: "args.currency" },
    });
    expect(refused.error?.message).toMatch(/confirmed other values of: currency/);
    expect(await store.get(ex.keyFor(changed))).toBeNull();
    expect(services.posts.refunds).toBe(0);
    expect(await ex.call({ ...shown, deadline: turn(), confirmationToken: token })).toMatchObject({
      status: "SUCCEEDED",
    });
    expect(services.posts.refunds).toBe(1);
  });

  it("a call that carries a token is held to it even where the policy asks for none (under the threshold); without one it proceeds", async () => {
    const ex = executor();
    const shown = { runId: "run-2", stepId: "small", tool: "issue_refund", args: { order_id: "A-7", amount: "50.00" } };
    const token = confirm(ex, shown);
    const changed = { ...shown, args: { ...shown.args, currency: "USD" } };
    expect(await ex.call({ ...changed, deadline: turn(), confirmationToken: token })).toMatchObject({
      status: "FAILED_NO_EFFECT",
      error: { code: "CONFIRMATION_REQUIRED", field: "args.currency" },
    });
    expect(await ex.call({ ...shown, deadline: turn(), confirmationToken: "garbage.forged" })).toMatchObject({
      status: "FAILED_NO_EFFECT",
      error: { code: "CONFIRMATION_REQUIRED", field: "confirmationToken" },
    });
    expect(services.posts.refunds).toBe(0);
    expect(await ex.call({ ...shown, deadline: turn(), confirmationToken: token })).toMatchObject({
      status: "SUCCEEDED",
    });
    const other = { ...shown, stepId: "small-2" };
    expect(await ex.call({ ...other, deadline: turn() })).toMatchObject({ status: "SUCCEEDED" });
    expect(services.posts.refunds).toBe(2);
  });

  it("a new attempt after FAILED_NO_EFFECT sends the new arguments, so it needs a token for them", async () => {
    const ex = executor();
    const shown = { runId: "run-1", stepId: "refund", tool: "issue_refund", args: { order_id: "A-9", amount: 500 } };
    const token = confirm(ex, shown);
    services.fault("refunds", { commit: false, answer: 422 });
    expect(await ex.call({ ...shown, deadline: turn(), confirmationToken: token })).toMatchObject({
      status: "FAILED_NO_EFFECT",
    });
    expect(services.posts.refunds).toBe(1);
    const changed = { ...shown, args: { ...shown.args, currency: "USD" } };
    expect(await ex.call({ ...changed, deadline: turn(), confirmationToken: token })).toMatchObject({
      status: "FAILED_NO_EFFECT",
      error: { code: "CONFIRMATION_REQUIRED", field: "args.currency" },
    });
    expect(services.posts.refunds).toBe(1); // the new arguments never reached the remote
    expect(services.effects.refunds).toHaveLength(0);
  });
});

it("canonicalArguments: identity fields by their canonicaliser, the rest as RFC 8785 JSON, undefined left out", () => {
  const tool = defineTool({
    name: "t",
    kind: "unsafe",
    args: z.object({ id: z.string(), when: z.coerce.date(), big: z.coerce.bigint(), note: z.string().optional() }),
    identity: { id: canon.upper },
    timeoutMs: 1000,
    invoke: async () => null,
  });
  const parsed = tool.args!.parse({ id: "a-1", when: "2026-01-01T00:00:00Z", big: "12" });
  expect(canonicalArguments(tool, parsed)).toEqual({
    id: "id:A-1",
    when: '"2026-01-01T00:00:00.000Z"',
    big: '{"$bigint":"12"}',
  });
  expect(canonicalArguments(tool, "scalar")).toEqual({ args: '"scalar"' });
  // A tool without a schema: an own `__proto__` argument is bound too.
  const bare = JSON.parse('{"__proto__": {"to": "x"}, "a": 1}');
  expect(Object.keys(canonicalArguments({ identity: {} }, bare)).sort()).toEqual(["__proto__", "a"]);
});
