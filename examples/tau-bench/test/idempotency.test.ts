/** Remote-system realism: Idempotency-Key replay, 409 in flight, 422 on reuse, retention, and lookups. */
import { afterEach, describe, expect, it } from "vitest";
import { pyDumps } from "../src/domain/py-json.ts";
import { firstRetailAction, get, post, type Running, start, stateHash } from "./support.ts";

describe("idempotency keys and lookups", () => {
  let running: Running | undefined;
  afterEach(async () => {
    await running?.service.close();
    running = undefined;
  });

  it("replays the first response for a repeated key without doing the work again", async () => {
    running = await start({ realism: "full" });
    const { url } = running;
    const cancel = firstRetailAction("cancel_pending_order");
    const body = pyDumps(cancel.kwargs);
    const first = await post(`${url}/retail/tools/cancel_pending_order`, body, { "idempotency-key": "k-1" });
    expect(first.status).toBe(200);
    expect(first.body.output).toMatch(/"status": "cancelled"/);
    const after = await stateHash(url, "retail");
    const again = await post(`${url}/retail/tools/cancel_pending_order`, body, { "idempotency-key": "k-1" });
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body.output).toBe(first.body.output);
    expect(await stateHash(url, "retail")).toBe(after);
    // Without the key the service runs it again (and τ-bench refuses the repeat).
    const unkeyed = await post(`${url}/retail/tools/cancel_pending_order`, body);
    expect(unkeyed.body.output).toBe("Error: non-pending order cannot be cancelled");
    const byKey = await get(`${url}/retail/lookup/by-key/k-1`);
    expect(byKey.status).toBe(200);
    expect(byKey.body).toMatchObject({ key: "k-1", tool: "cancel_pending_order", output: first.body.output });
    expect((await get(`${url}/retail/lookup/by-key/nope`)).status).toBe(404);
  });

  it("answers 409 while the first request with a key is in flight", async () => {
    running = await start({ realism: "full", realismOverrides: { "retail.cancel_pending_order": { latencyMs: 300 } } });
    const { url } = running;
    const body = pyDumps(firstRetailAction("cancel_pending_order").kwargs);
    const slow = post(`${url}/retail/tools/cancel_pending_order`, body, { "idempotency-key": "k-2" });
    await new Promise((r) => setTimeout(r, 60));
    const second = await post(`${url}/retail/tools/cancel_pending_order`, body, { "idempotency-key": "k-2" });
    expect(second.status).toBe(409);
    expect(second.body.error).toBe("key_in_flight");
    expect((await get(`${url}/retail/lookup/by-key/k-2`)).status).toBe(409);
    expect((await slow).status).toBe(200);
    expect((await get(`${url}/retail/lookup/by-key/k-2`)).status).toBe(200);
  });

  it("answers 422 when a key is reused with a different body or tool", async () => {
    running = await start({ realism: "full" });
    const { url } = running;
    const cancel = firstRetailAction("cancel_pending_order");
    await post(`${url}/retail/tools/cancel_pending_order`, pyDumps(cancel.kwargs), { "idempotency-key": "k-3" });
    const changed = new Map(cancel.kwargs);
    changed.set("reason", changed.get("reason") === "no longer needed" ? "ordered by mistake" : "no longer needed");
    const r = await post(`${url}/retail/tools/cancel_pending_order`, pyDumps(changed), { "idempotency-key": "k-3" });
    expect(r.status).toBe(422);
    expect(r.body.error).toBe("key_reused");
    const other = firstRetailAction("modify_pending_order_address");
    const r2 = await post(`${url}/retail/tools/modify_pending_order_address`, pyDumps(other.kwargs), {
      "idempotency-key": "k-3",
    });
    expect(r2.status).toBe(422);
  });

  it("forgets keys after the retention period", async () => {
    running = await start({ realism: "full", keyRetentionMs: 100 });
    const { url } = running;
    const body = pyDumps(firstRetailAction("cancel_pending_order").kwargs);
    await post(`${url}/retail/tools/cancel_pending_order`, body, { "idempotency-key": "k-4" });
    await new Promise((r) => setTimeout(r, 150));
    const late = await post(`${url}/retail/tools/cancel_pending_order`, body, { "idempotency-key": "k-4" });
    expect(late.headers.get("idempotent-replayed")).toBeNull();
    expect(late.body.output).toBe("Error: non-pending order cannot be cancelled");
    expect((await get(`${url}/retail/lookup/by-key/k-4`)).status).toBe(200);
  });

  it("ignores keys for tools that do not honour them; business-identity lookups still find the effect", async () => {
    running = await start(); // mixed profile: return_delivered_order_items offers identity lookups only
    const { url } = running;
    const ret = firstRetailAction("return_delivered_order_items");
    const orderId = ret.kwargs.get("order_id") as string;
    const since = Date.now();
    const body = pyDumps(ret.kwargs);
    const first = await post(`${url}/retail/tools/return_delivered_order_items`, body, { "idempotency-key": "k-5" });
    expect(first.body.output).toMatch(/"status": "return requested"/);
    const second = await post(`${url}/retail/tools/return_delivered_order_items`, body, { "idempotency-key": "k-5" });
    expect(second.body.output).toBe("Error: non-delivered order cannot be returned");
    expect((await get(`${url}/retail/lookup/by-key/k-5`)).status).toBe(404);
    const q = `order_id=${encodeURIComponent(orderId)}`;
    const found = await get(`${url}/retail/lookup/return_delivered_order_items?${q}&since=${since}`);
    expect(found.body).toMatchObject({ found: true, count: 1 });
    const effect = found.body.effect as { record: { status: string; return_items: string[] } };
    expect(effect.record.status).toBe("return requested");
    expect(effect.record.return_items).toEqual([...(ret.kwargs.get("item_ids") as string[])].sort());
    const later = await get(`${url}/retail/lookup/return_delivered_order_items?${q}&since=${Date.now() + 1000}`);
    expect(later.body).toEqual({ found: false, count: 0 });
    expect((await get(`${url}/retail/lookup/return_delivered_order_items`)).status).toBe(400);
    expect((await get(`${url}/airline/lookup/send_certificate?user_id=x`)).status).toBe(404);
  });

  it("keeps named instances isolated", async () => {
    running = await start();
    const { url } = running;
    const body = pyDumps(firstRetailAction("cancel_pending_order").kwargs);
    const before = await stateHash(url, "retail.b");
    await post(`${url}/retail.a/tools/cancel_pending_order`, body);
    expect(await stateHash(url, "retail.b")).toBe(before);
    expect(await stateHash(url, "retail.a")).not.toBe(before);
    await post(`${url}/retail.a/reset`, "{}");
    expect(await stateHash(url, "retail.a")).toBe(before);
  });
});
