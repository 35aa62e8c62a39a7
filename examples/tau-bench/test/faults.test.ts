/** Seeded fault injection: each fault kind's observable behaviour and effect, and determinism. */
import { afterEach, describe, expect, it } from "vitest";
import { pyDumps } from "../src/domain/py-json.ts";
import { DEFAULT_FAULTS, type FaultKind, FaultPlanner, parseFaultMix } from "../src/service/faults.ts";
import { firstRetailAction, get, networkOutcome, post, type Running, start, stateHash } from "./support.ts";

describe("FaultPlanner", () => {
  it("is deterministic for a seed and respects rate and mix", () => {
    const cfg = { ...DEFAULT_FAULTS, rate: 0.2, mix: parseFaultMix("refuse=1,503=1,hang=1,504=1,reset=1,lag=1") };
    const draw = (seed: number) => {
      const p = new FaultPlanner(cfg, seed);
      return Array.from({ length: 5000 }, () => p.next());
    };
    const a = draw(1);
    expect(draw(1)).toEqual(a);
    expect(draw(2)).not.toEqual(a);
    const faulted = a.filter((f) => f !== undefined);
    expect(faulted.length / a.length).toBeGreaterThan(0.17);
    expect(faulted.length / a.length).toBeLessThan(0.23);
    expect(new Set(faulted)).toEqual(new Set(["refuse", "503", "hang", "504", "reset", "lag"]));
    const only503 = new FaultPlanner({ ...cfg, rate: 1, mix: parseFaultMix("503=1") }, 1);
    expect(Array.from({ length: 20 }, () => only503.next())).toEqual(Array(20).fill("503"));
    expect(() => parseFaultMix("boom=1")).toThrow();
  });
});

describe("fault injection over HTTP", () => {
  let running: Running | undefined;
  afterEach(async () => {
    await running?.service.close();
    running = undefined;
  });

  const cancel = () => firstRetailAction("cancel_pending_order");
  const only = (kind: FaultKind, extra = {}) => ({ rate: 1, mix: { [kind]: 1 }, hangMs: 5_000, lagMs: 300, ...extra });

  async function setup(kind: FaultKind, extra = {}) {
    running = await start({ realism: "full", faults: only(kind, extra) });
    const a = cancel();
    const orderId = a.kwargs.get("order_id") as string;
    return {
      url: running.url,
      body: pyDumps(a.kwargs),
      before: await stateHash(running.url, "retail"),
      identity: `${running.url}/retail/lookup/cancel_pending_order?order_id=${encodeURIComponent(orderId)}`,
    };
  }

  it("never faults read tools", async () => {
    const { url } = await setup("refuse");
    const r = await post(`${url}/retail/tools/list_all_product_types`, "{}");
    expect(r.status).toBe(200);
  });

  it("refuse: the connection is dropped before the body is read; nothing happens", async () => {
    const { url, body, before, identity } = await setup("refuse");
    const outcome = await networkOutcome(
      post(`${url}/retail/tools/cancel_pending_order`, body, { "idempotency-key": "r1" }),
    );
    expect(outcome).not.toBe("ok");
    expect(await stateHash(url, "retail")).toBe(before);
    expect((await get(`${url}/retail/lookup/by-key/r1`)).status).toBe(404);
    expect((await get(identity)).body.found).toBe(false);
  });

  it("503: answered without doing the work", async () => {
    const { url, body, before } = await setup("503");
    const r = await post(`${url}/retail/tools/cancel_pending_order`, body, { "idempotency-key": "s1" });
    expect(r.status).toBe(503);
    expect(await stateHash(url, "retail")).toBe(before);
    expect((await get(`${url}/retail/lookup/by-key/s1`)).status).toBe(404);
  });

  it("reset: the request is read, then the socket is reset; nothing happens", async () => {
    const { url, body, before } = await setup("reset");
    const outcome = await networkOutcome(post(`${url}/retail/tools/cancel_pending_order`, body));
    expect(outcome).toBe("ECONNRESET");
    expect(await stateHash(url, "retail")).toBe(before);
  });

  it("reset-after: the work is done, then the socket is reset; probes find it and a keyed retry replays", async () => {
    const { url, body, before, identity } = await setup("reset-after");
    const outcome = await networkOutcome(
      post(`${url}/retail/tools/cancel_pending_order`, body, { "idempotency-key": "ra1" }),
    );
    expect(outcome).toBe("ECONNRESET");
    const after = await stateHash(url, "retail");
    expect(after).not.toBe(before);
    expect((await get(`${url}/retail/lookup/by-key/ra1`)).status).toBe(200);
    expect((await get(identity)).body.found).toBe(true);
    running?.service.setFaults({ rate: 0 });
    const retry = await post(`${url}/retail/tools/cancel_pending_order`, body, { "idempotency-key": "ra1" });
    expect(retry.status).toBe(200);
    expect(await stateHash(url, "retail")).toBe(after);
  });

  it("504: the work is done, then 504; probes find it and a keyed retry replays", async () => {
    const { url, body, before, identity } = await setup("504");
    const r = await post(`${url}/retail/tools/cancel_pending_order`, body, { "idempotency-key": "g1" });
    expect(r.status).toBe(504);
    const after = await stateHash(url, "retail");
    expect(after).not.toBe(before);
    expect((await get(`${url}/retail/lookup/by-key/g1`)).status).toBe(200);
    expect((await get(identity)).body.found).toBe(true);
    running?.service.setFaults({ rate: 0 });
    const retry = await post(`${url}/retail/tools/cancel_pending_order`, body, { "idempotency-key": "g1" });
    expect(retry.status).toBe(200);
    expect(retry.body.output).toMatch(/"status": "cancelled"/);
    expect(await stateHash(url, "retail")).toBe(after);
  });

  it("hang: the work is done and the response never comes before the client timeout", async () => {
    const { url, body, before, identity } = await setup("hang");
    const outcome = await networkOutcome(post(`${url}/retail/tools/cancel_pending_order`, body, {}, 300));
    expect(outcome).toBe("timeout");
    expect(await stateHash(url, "retail")).not.toBe(before);
    expect((await get(identity)).body.found).toBe(true);
  });

  it("lag: the work is done but lookups see it only after the lag", async () => {
    const { url, body, before, identity } = await setup("lag");
    const r = await post(`${url}/retail/tools/cancel_pending_order`, body, { "idempotency-key": "l1" });
    expect(r.status).toBe(504);
    expect(await stateHash(url, "retail")).not.toBe(before);
    expect((await get(identity)).body.found).toBe(false);
    expect((await get(`${url}/retail/lookup/by-key/l1`)).status).toBe(404);
    await new Promise((res) => setTimeout(res, 350));
    expect((await get(identity)).body.found).toBe(true);
    expect((await get(`${url}/retail/lookup/by-key/l1`)).status).toBe(200);
  });

  it("lag with --lag-response ok answers 200 and still delays lookups", async () => {
    const { url, body, identity } = await setup("lag", { lagResponse: "ok" });
    expect((await post(`${url}/retail/tools/cancel_pending_order`, body)).status).toBe(200);
    expect((await get(identity)).body.found).toBe(false);
  });

  it("draws the same fault sequence for the same seed", async () => {
    running = await start({
      realism: "full",
      faults: { rate: 0.5, mix: parseFaultMix("refuse=1,503=1,504=1,reset=1,lag=1"), lagResponse: "ok", seed: 7 },
    });
    const { url } = running;
    const addr = firstRetailAction("modify_pending_order_address");
    const run = async () => {
      const seen: string[] = [];
      for (let k = 0; k < 16; k++) {
        const r = post(`${url}/retail/tools/modify_pending_order_address`, pyDumps(addr.kwargs));
        seen.push(
          await networkOutcome(r.then((x) => (x.status === 200 ? x : Promise.reject(new Error(String(x.status)))))),
        );
      }
      return seen;
    };
    const first = await run();
    running.service.setFaults({ seed: 7 });
    expect(await run()).toEqual(first);
    expect(new Set(first).size).toBeGreaterThan(1);
  });
});
