/**
 * Issue 9 §6a, DESIGN.md rule 3: after a definite FAILED_NO_EFFECT, a new attempt sends the new
 * call's (validated) arguments; after a rejection the remote may have cached under the key (a 402
 * decline, Stripe-style), the wire key is one the remote has not answered; the envelope says which
 * key and arguments were sent; the record keeps its idempotency key. A failure that reached no key
 * store (connection refused, 429) keeps the wire key.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { canon } from "../../src/canon.ts";
import { Deadline } from "../../src/deadline.ts";
import { createExecutor, type Executor } from "../../src/executor.ts";
import { callHttp } from "../../src/http.ts";
import { MemoryIntentStore } from "../../src/memory-intent-store.ts";
import { defineTool } from "../../src/tool.ts";
import { type CardRemote, freePort, startCardRemote } from "./support.ts";

const chargeArgs = z.object({
  order_id: z.string().min(1),
  amount: z.string(),
  currency: z.string().length(3),
  payment_method: z.string().min(1),
});
const ORDER = { order_id: "A-1182", amount: "49.90", currency: "EUR" };
const HEX32 = /^[0-9a-f]{32}$/;

let remote: CardRemote;
let store: MemoryIntentStore;
/** Where the tool sends; a test may point it at a closed port. */
let baseUrl: string;

beforeEach(async () => {
  remote = await startCardRemote(["pm_card_declined", "pm_card_insufficient_funds"]);
  store = new MemoryIntentStore();
  baseUrl = remote.url;
});
afterEach(async () => {
  await remote.close();
});

function executor(): Executor {
  const charge = defineTool({
    name: "charge_card",
    kind: "idempotent_by_key",
    args: chargeArgs,
    // payment_method is not identity: correcting it is a retry of the same step.
    identity: { order_id: canon.upper, amount: canon.decimal(2) },
    timeoutMs: 1000,
    invoke: async (args, ctx) => (await callHttp(ctx, { method: "POST", url: `${baseUrl}/charges`, body: args })).body,
    // The key probe looks charges up by the key they were made with (the client reference it is given).
    probe: async (_args, ctx) => {
      const res = await callHttp(ctx, {
        method: "GET",
        url: `${remote.url}/charges?clientRef=${encodeURIComponent(ctx.clientRef)}`,
      });
      return (res.body as unknown[])[0] ?? null;
    },
  });
  return createExecutor({ store, tools: [charge], probe: { spacingMs: 10, attempts: 3, timeoutMs: 500 } });
}

const charge = (ex: Executor, payment_method: string) =>
  ex.call({
    runId: "run-6a",
    stepId: "charge",
    tool: "charge_card",
    args: { ...ORDER, payment_method },
    deadline: Deadline.after(5_000),
  });

describe("issue 9 §6a: a new attempt after a definite failure sends the new call's arguments", () => {
  it("402 decline cached under the key → corrected payment_method is sent under a key the remote has not answered → SUCCEEDED, one charge", async () => {
    const ex = executor();
    const declined = await charge(ex, "pm_card_declined");
    expect(declined).toMatchObject({
      status: "FAILED_NO_EFFECT",
      retry_safe: true,
      attempt: 1,
      error: { httpStatus: 402 },
    });
    const key = declined.idempotency_key;
    expect(key).toMatch(HEX32);
    expect(declined.sent_key).toBeUndefined(); // attempt 1 travels under the record's key
    expect(remote.keysSeen).toEqual([key]);
    expect(remote.charges).toHaveLength(0);

    const corrected = await charge(ex, "pm_card_visa");
    expect(corrected).toMatchObject({ status: "SUCCEEDED", retry_safe: true, attempt: 2, replayed: false });
    // What was sent: the new call's arguments ...
    expect(remote.bodiesSeen).toHaveLength(2);
    expect(remote.bodiesSeen[1]).toEqual({ ...ORDER, payment_method: "pm_card_visa" });
    // ... under a key the remote has not answered (no replayed 402, no idempotency_error).
    expect(remote.keysSeen).toHaveLength(2);
    const secondKey = remote.keysSeen[1]!;
    expect(secondKey).toMatch(HEX32);
    expect(secondKey).not.toBe(key);
    expect(remote.replays).toEqual([]);
    // The envelope says so; the record keeps its idempotency key as its identity.
    expect(corrected.idempotency_key).toBe(key);
    expect(corrected.sent_key).toBe(secondKey);
    expect(corrected.sent_args).toMatchObject({ payment_method: "pm_card_visa" });
    expect(corrected.result).toMatchObject({ id: "ch_1", payment_method: "pm_card_visa" });
    expect(remote.charges).toHaveLength(1);
    expect(remote.charges[0]).toMatchObject({ key: secondKey, body: { payment_method: "pm_card_visa" } });

    const record = await store.get(key);
    expect(record).toMatchObject({
      key,
      status: "SUCCEEDED",
      attempt: 2,
      sentKey: secondKey,
      args: { payment_method: "pm_card_visa" },
      needsHuman: false,
    });
    const created = (await store.listEvents(key)).filter((e) => e.type === "created");
    expect(created.at(-1)?.data).toMatchObject({ attempt: 2, retryOf: "FAILED_NO_EFFECT", sentKey: secondKey });

    // A repeat call replays the charge (rule 1): nothing is sent, and the envelope still says what was.
    const repeat = await charge(ex, "pm_card_visa");
    expect(repeat).toMatchObject({ status: "SUCCEEDED", replayed: true, idempotency_key: key, sent_key: secondKey });
    expect(remote.posts).toBe(2);
    expect(remote.charges).toHaveLength(1);
  });

  it("two declines in a row, then a good card: every attempt travels under a key the remote never answered", async () => {
    const ex = executor();
    const first = await charge(ex, "pm_card_declined");
    const second = await charge(ex, "pm_card_insufficient_funds");
    expect(second).toMatchObject({ status: "FAILED_NO_EFFECT", attempt: 2, error: { httpStatus: 402 } });
    expect(second.sent_key).toBe(remote.keysSeen[1]);
    expect(second.sent_args).toMatchObject({ payment_method: "pm_card_insufficient_funds" });
    const third = await charge(ex, "pm_card_visa");
    expect(third).toMatchObject({ status: "SUCCEEDED", attempt: 3, idempotency_key: first.idempotency_key });

    expect(remote.bodiesSeen.map((b) => b.payment_method)).toEqual([
      "pm_card_declined",
      "pm_card_insufficient_funds",
      "pm_card_visa",
    ]);
    expect(new Set(remote.keysSeen).size).toBe(3);
    expect(remote.keysSeen[0]).toBe(first.idempotency_key);
    expect(third.sent_key).toBe(remote.keysSeen[2]);
    expect(remote.replays).toEqual([]);
    expect(remote.charges).toHaveLength(1);
  });

  it("the same card again after a decline is sent again under a fresh key (the remote judges it anew), not answered from its cache", async () => {
    const ex = executor();
    await charge(ex, "pm_card_declined");
    remote.declined.delete("pm_card_declined"); // the cardholder cleared the block with the bank
    const again = await charge(ex, "pm_card_declined");
    expect(again).toMatchObject({ status: "SUCCEEDED", attempt: 2 });
    expect(remote.keysSeen[1]).not.toBe(remote.keysSeen[0]);
    expect(remote.replays).toEqual([]);
    expect(remote.charges).toHaveLength(1);
  });

  it("connection refused (NOT_SENT) then a retry: the same wire key, the new arguments, no sent_key", async () => {
    const ex = executor();
    baseUrl = `http://127.0.0.1:${await freePort()}`;
    const refused = await charge(ex, "pm_card_visa");
    expect(refused).toMatchObject({ status: "FAILED_NO_EFFECT", retry_safe: true, attempt: 1 });
    expect(refused.error?.httpStatus).toBeUndefined();
    expect(remote.posts).toBe(0);

    baseUrl = remote.url;
    const retried = await charge(ex, "pm_card_mastercard");
    expect(retried).toMatchObject({ status: "SUCCEEDED", attempt: 2, idempotency_key: refused.idempotency_key });
    expect(retried.sent_key).toBeUndefined();
    expect(retried.sent_args).toMatchObject({ payment_method: "pm_card_mastercard" });
    expect(remote.keysSeen).toEqual([refused.idempotency_key]);
    expect(remote.bodiesSeen).toEqual([{ ...ORDER, payment_method: "pm_card_mastercard" }]);
    expect(remote.charges).toHaveLength(1);
    expect((await store.get(refused.idempotency_key))?.sentKey ?? null).toBeNull();
  });

  it("429 (rate limited before executing, not stored) then a retry: the same wire key", async () => {
    const ex = executor();
    remote.rateLimitNext = 1;
    const limited = await charge(ex, "pm_card_visa");
    expect(limited).toMatchObject({ status: "FAILED_NO_EFFECT", retry_safe: true, error: { httpStatus: 429 } });
    const retried = await charge(ex, "pm_card_visa");
    expect(retried).toMatchObject({ status: "SUCCEEDED", attempt: 2, idempotency_key: limited.idempotency_key });
    expect(retried.sent_key).toBeUndefined();
    expect(remote.keysSeen).toEqual([limited.idempotency_key, limited.idempotency_key]);
    expect(remote.charges).toHaveLength(1);
  });

  it("after a decline, a fresh key that is then refused the connection is kept for the next try (it was never answered)", async () => {
    const ex = executor();
    const declined = await charge(ex, "pm_card_declined");
    baseUrl = `http://127.0.0.1:${await freePort()}`;
    const refused = await charge(ex, "pm_card_visa");
    expect(refused).toMatchObject({ status: "FAILED_NO_EFFECT", attempt: 2 });
    const freshKey = refused.sent_key;
    expect(freshKey).toMatch(HEX32);
    expect(freshKey).not.toBe(declined.idempotency_key);

    baseUrl = remote.url;
    const ok = await charge(ex, "pm_card_visa");
    expect(ok).toMatchObject({ status: "SUCCEEDED", attempt: 3, sent_key: freshKey });
    expect(remote.keysSeen).toEqual([declined.idempotency_key, freshKey]);
    expect(remote.charges).toHaveLength(1);
  });

  it("the fresh-key attempt's answer is lost (charge made, connection reset): reconciliation probes the key that was sent → found, no second charge", async () => {
    const ex = executor();
    const declined = await charge(ex, "pm_card_declined");
    remote.resetNext = 1;
    const lost = await charge(ex, "pm_card_visa");
    expect(lost).toMatchObject({ status: "SUCCEEDED", resolution: "found", attempt: 2 });
    expect(lost.idempotency_key).toBe(declined.idempotency_key);
    expect(lost.sent_key).toBe(remote.keysSeen[1]);
    expect(lost.result).toMatchObject({ id: "ch_1", clientRef: remote.keysSeen[1] });
    expect(remote.posts).toBe(2); // found by the probe: nothing resent
    expect(remote.charges).toHaveLength(1);
  });

  it("an UNKNOWN fresh-key attempt: the operator's probe re-run (rerunProbes) looks the charge up under the key that was sent", async () => {
    const ex = executor();
    await charge(ex, "pm_card_declined");
    remote.resetNext = 1; // the charge is made under the fresh key, the answer is lost
    remote.probesFail = true; // and reconciliation cannot tell yet
    const lost = await charge(ex, "pm_card_visa");
    expect(lost).toMatchObject({ status: "UNKNOWN", attempt: 2, sent_key: remote.keysSeen[1] });
    expect(remote.charges).toHaveLength(1);

    remote.probesFail = false;
    const report = await ex.rerunProbes(lost.idempotency_key);
    expect(report.probes).toHaveLength(1);
    // The operator must be shown the charge, not "every probe says absent" (which invites confirm_no_effect).
    expect(report.probes[0]).toMatchObject({ probe: "key", answer: "found", found: { id: "ch_1" } });
    expect(report.summary).not.toMatch(/absent/);
  });
});
