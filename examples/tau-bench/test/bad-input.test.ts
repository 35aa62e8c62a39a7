/** Bad input: τ-bench's own error outputs where it defines them, clear 4xx otherwise, state never touched. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pyDumps } from "../src/domain/py-json.ts";
import { firstRetailAction, get, post, type Running, start, stateHash } from "./support.ts";

describe("bad input", () => {
  let running: Running;
  let url: string;
  let initial: string;
  beforeAll(async () => {
    running = await start({ realism: "full" });
    url = running.url;
    initial = await stateHash(url, "retail");
  });
  afterAll(() => running.service.close());

  const tool = (name: string, domain = "retail") => `${url}/${domain}/tools/${name}`;

  it("answers malformed JSON, non-object bodies and wrong argument types with 400", async () => {
    expect((await post(tool("cancel_pending_order"), "{not json")).body.error).toBe("malformed_json");
    expect((await post(tool("cancel_pending_order"), "[1,2]")).body.error).toBe("body_not_object");
    expect((await post(tool("cancel_pending_order"), '"x"')).status).toBe(400);
    const wrong = await post(tool("cancel_pending_order"), '{"order_id": 5, "reason": "no longer needed"}');
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe("invalid_arguments");
    const lone = await post(tool("cancel_pending_order"), '{"order_id": "\\ud800", "reason": "x"}');
    expect(lone.status).toBe(400);
    const nested = await post(
      tool("update_reservation_passengers", "airline"),
      '{"reservation_id": "ABC", "passengers": [1]}',
    );
    expect(nested.status).toBe(400);
    expect((await post(tool("cancel_pending_order"), "{}", { "idempotency-key": "bad key" })).status).toBe(400);
    expect(await stateHash(url, "retail")).toBe(initial);
  });

  it("answers unknown tools, domains and endpoints with 404", async () => {
    const r = await post(tool("refund_everything"), "{}");
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ error: "unknown_tool", message: "Unknown action refund_everything" });
    expect((await post(`${url}/bank/tools/x`, "{}")).status).toBe(404);
    expect((await get(`${url}/retail/nothing`)).status).toBe(404);
  });

  it("answers oversized bodies with 413", async () => {
    const big = JSON.stringify({ order_id: "x".repeat(2 << 20), reason: "no longer needed" });
    expect((await post(tool("cancel_pending_order"), big)).status).toBe(413);
  });

  it("returns τ-bench's own error outputs for missing/unexpected arguments, unknown ids and invalid values", async () => {
    const out = async (name: string, body: string, domain = "retail") => {
      const r = await post(tool(name, domain), body);
      expect(r.status).toBe(200);
      return r.body.output;
    };
    expect(await out("cancel_pending_order", '{"order_id": "#W0000000"}')).toBe(
      "Error: CancelPendingOrder.invoke() missing 1 required positional argument: 'reason'",
    );
    expect(await out("modify_user_address", '{"user_id": "x"}')).toBe(
      "Error: ModifyUserAddress.invoke() missing 6 required positional arguments: 'address1', 'address2', 'city', 'state', 'country', and 'zip'",
    );
    expect(await out("cancel_reservation", '{"reservation_id": "X", "reason": "y"}', "airline")).toBe(
      "Error: CancelReservation.invoke() got an unexpected keyword argument 'reason'",
    );
    expect(await out("cancel_pending_order", '{"order_id": "#W0000000", "reason": "no longer needed"}')).toBe(
      "Error: order not found",
    );
    const cancel = firstRetailAction("cancel_pending_order");
    const bad = new Map(cancel.kwargs);
    bad.set("reason", "because");
    expect(await out("cancel_pending_order", pyDumps(bad))).toBe("Error: invalid reason");
    expect(await out("get_reservation_details", '{"reservation_id": "NOPE"}', "airline")).toBe("Error: user not found");
    expect(await out("calculate", '{"expression": "2 * ((350 - 122) + (499 - 127))"}')).toBe("1200.0");
    expect(await out("calculate", '{"expression": "1/0"}')).toBe("Error: division by zero");
    expect(await stateHash(url, "retail")).toBe(initial);
  });

  it("keeps floats the caller sent as floats", async () => {
    const r = await post(tool("send_certificate", "airline"), '{"user_id": "mia_li_3668", "amount": 100.0}');
    expect(r.body.output).toBe("Certificate certificate_3221322 added to user mia_li_3668 with amount 100.0.");
  });
});
