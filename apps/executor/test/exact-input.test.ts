/**
 * Identities and numbers are exact (issue 21 §4), over HTTP against real PostgreSQL, effects counted
 * at the remote: a composed and a decomposed order id are one identity (one refund); a body that is
 * not UTF-8 is refused (never decoded with U+FFFD); an integer beyond 2^53 to a field typed `number`
 * is refused naming the field (never rounded into another order), and taken exactly by a field
 * declared as a string.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildCatalog } from "../src/catalog/load.ts";
import { type Json, startStack, type TestStack } from "./support.ts";

/** A declarative refund whose `order_id` the catalog types `number`, and one typing it `string`. */
const refund = (url: string, name: string, orderType: string) => ({
  name,
  kind: "idempotent_by_key",
  method: "POST",
  url: `${url}/effects`,
  args: {
    type: "object",
    properties: { order_id: { type: orderType }, amount: { type: ["number", "string"] } },
    required: ["order_id", "amount"],
  },
  identity: { order_id: "upper", amount: "decimal:2" },
  timeoutMs: 1500,
  keyProbe: { url: `${url}/effects?clientRef={key}`, found: { type: "non_empty_array" } },
});

let stack: TestStack;
beforeAll(async () => {
  stack = await startStack({
    tools: (remote) =>
      buildCatalog({
        httpTools: [refund(remote.url, "issue_refund", "string"), refund(remote.url, "refund_by_number", "number")],
      }),
  });
});
afterAll(async () => {
  await stack?.close();
});

/** POSTs raw bytes to calls.execute. */
async function postRaw(body: Buffer | string) {
  const res = await fetch(`${stack.service.url}/trpc/calls.execute`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${stack.keys.agent}` },
    body,
  });
  return { status: res.status, json: (await res.json()) as Json };
}

describe("identity canonicalisers normalise Unicode (NFC) first", () => {
  it("CAFÉ-2 composed and decomposed is one step, one record, one refund (the second replays)", async () => {
    const before = stack.remote.effects.length;
    const call = (order: string) => ({ runId: "run-nfc", tool: "issue_refund", args: { order_id: order, amount: 5 } });
    const composed = await stack.post("calls.execute", call("CAF\u00c9-2"));
    const decomposed = await stack.post("calls.execute", call("CAFE\u0301-2"));
    expect(composed.json.result.data).toMatchObject({ status: "SUCCEEDED", replayed: false });
    expect(decomposed.json.result.data).toMatchObject({
      status: "SUCCEEDED",
      replayed: true,
      idempotency_key: composed.json.result.data.idempotency_key,
    });
    expect(stack.remote.effects.length - before).toBe(1);
  });
});

describe("a request body that is not UTF-8 is refused, naming the body", () => {
  it("tRPC calls.execute: 400, nothing recorded, nothing sent", async () => {
    const before = stack.remote.effects.length;
    const head = Buffer.from('{"runId":"run-utf8","stepId":"s1","tool":"issue_refund","args":{"order_id":"A-');
    const tail = Buffer.from('","amount":5}}');
    for (const bad of [[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80]]) {
      const res = await postRaw(Buffer.concat([head, Buffer.from(bad), tail]));
      expect(res.status).toBe(400);
      expect(res.json.error.data).toMatchObject({ code: "BAD_REQUEST", field: "body" });
      expect(res.json.error.message).toMatch(/UTF-8/);
    }
    expect(stack.remote.effects.length - before).toBe(0);
    expect(await stack.service.services.store.prisma.intentRecord.count({ where: { runId: "run-utf8" } })).toBe(0);
  });
});

describe("a number JSON would not keep exactly is refused unless the field takes it losslessly", () => {
  it("2512292042121000001 to a field typed number: 400 naming args.order_id, nothing sent", async () => {
    const before = stack.remote.effects.length;
    const res = await postRaw(
      '{"runId":"run-big","stepId":"s1","tool":"refund_by_number","args":{"order_id":2512292042121000001,"amount":5}}',
    );
    expect(res.status).toBe(400);
    expect(res.json.error.data.field).toBe("args.order_id");
    expect(res.json.error.message).toContain("2512292042121000001 would be read as 2512292042121000000");
    expect(res.json.error.data.detail).toMatchObject({
      status: "FAILED_NO_EFFECT",
      error: { code: "INVALID_ARGUMENTS" },
    });
    expect(stack.remote.effects.length - before).toBe(0);
  });

  it("the same number to a field typed string is taken exactly: the remote gets every digit", async () => {
    const before = stack.remote.effects.length;
    const res = await postRaw(
      '{"runId":"run-big","stepId":"s2","tool":"issue_refund","args":{"order_id":2512292042121000001,"amount":5}}',
    );
    expect(res.json.result.data).toMatchObject({ status: "SUCCEEDED" });
    expect(stack.remote.effects.length - before).toBe(1);
    expect(stack.remote.effects.at(-1)?.body.order_id).toBe("2512292042121000001");
  });

  it("outside the arguments (budgetMs: 1e400) it is refused naming the field", async () => {
    const res = await postRaw(
      '{"runId":"run-big","stepId":"s3","tool":"issue_refund","args":{"order_id":"B-1","amount":5},"budgetMs":1e400}',
    );
    expect(res.status).toBe(400);
    expect(res.json.error.data.field).toBe("budgetMs");
  });

  it("in a batch, the call holding it is refused and the other runs", async () => {
    const before = stack.remote.effects.length;
    const res = await fetch(`${stack.service.url}/trpc/calls.execute,calls.execute?batch=1`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${stack.keys.agent}` },
      body:
        '{"0":{"runId":"run-big-batch","stepId":"a","tool":"refund_by_number","args":{"order_id":12,"amount":5}},' +
        '"1":{"runId":"run-big-batch","stepId":"b","tool":"refund_by_number","args":{"order_id":9007199254740993,"amount":5}}}',
    });
    const [first, second] = (await res.json()) as [{ result?: unknown }, { error?: { data: { field: string } } }];
    expect(first.result).toBeDefined();
    expect(second.error?.data.field).toBe("args.order_id");
    expect(stack.remote.effects.length - before).toBe(1);
  });
});
