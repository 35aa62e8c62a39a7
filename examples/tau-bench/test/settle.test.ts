/**
 * The settle window the catalog declares: derived per fault kind from the service's settings, and
 * checked against the real service — a lookup made at the end of the client's attempt + the window
 * sees every effect the service applied, while one made earlier may not.
 */
import { afterEach, describe, expect, it } from "vitest";
import { SETTLE_MARGIN_MS, settleBoundMs, settleBoundOfFault } from "../src/catalog/settle.ts";
import { tauBenchTools } from "../src/catalog/tools.ts";
import { DEFAULT_FAULTS, type FaultKind, NAMED_FAULT_MIXES, parseFaultMix } from "../src/service/faults.ts";
import { resolveRealism } from "../src/service/realism.ts";
import { get, networkOutcome, post, type Running, start } from "./support.ts";

describe("settleBoundOfFault / settleBoundMs", () => {
  it("gives each fault kind its bound after the attempt ended: none, latency, or latency + lag", () => {
    const latencyMs = 300;
    const lagMs = 5000;
    const bounds = Object.fromEntries(
      (["refuse", "503", "reset", "504", "hang", "lag"] as FaultKind[]).map((k) => [
        k,
        settleBoundOfFault(k, latencyMs, lagMs),
      ]),
    );
    expect(bounds).toEqual({ refuse: null, "503": null, reset: null, "504": 300, hang: 300, lag: 5300 });
    expect(settleBoundOfFault(undefined, latencyMs, lagMs)).toBe(300);
  });

  it("adds lagMs only when lag faults can be drawn, the tool's latency always, and the margin", () => {
    const none = { latencyMs: 0 };
    expect(settleBoundMs(none, DEFAULT_FAULTS)).toBe(SETTLE_MARGIN_MS); // rate 0: nothing lags
    expect(settleBoundMs(none, { ...DEFAULT_FAULTS, rate: 0.3 })).toBe(DEFAULT_FAULTS.lagMs + SETTLE_MARGIN_MS);
    const lagHeavy = { rate: 0.3, mix: parseFaultMix("lag-heavy"), lagMs: 5000 };
    expect(settleBoundMs(none, lagHeavy)).toBe(5500);
    expect(settleBoundMs({ latencyMs: 250 }, lagHeavy, 100)).toBe(5350);
    expect(settleBoundMs({ latencyMs: 250 }, { ...lagHeavy, mix: parseFaultMix("hang=1,504=1,reset=1") })).toBe(750);
    expect(settleBoundMs(none, { ...lagHeavy, mix: { ...lagHeavy.mix, lag: 0 } })).toBe(500);
  });

  it("names lag-heavy as lag=4,hang=2,504=1,reset=1,503=1,refuse=1", () => {
    expect(parseFaultMix(" lag-heavy ")).toEqual({ lag: 4, hang: 2, "504": 1, reset: 1, "503": 1, refuse: 1 });
    expect(parseFaultMix("all")).toEqual(DEFAULT_FAULTS.mix);
    expect(Object.keys(NAMED_FAULT_MIXES)).toEqual(["all", "lag-heavy"]);
  });
});

describe("tauBenchTools: settleMs from the service's settings", () => {
  const realism = resolveRealism("mixed", { "retail.modify_user_address": { latencyMs: 400 } });
  const byName = (tools: ReturnType<typeof tauBenchTools>) => new Map(tools.map((t) => [t.name, t]));

  it("declares the derived window on every write tool with a probe, so unsafe ones may be resent on absence", () => {
    const faults = { ...DEFAULT_FAULTS, rate: 0.3, lagMs: 5000 };
    const tools = byName(tauBenchTools({ baseUrl: "http://127.0.0.1:1", realism, timing: { faults } }));
    const cancel = tools.get("airline.cancel_reservation");
    expect(cancel).toMatchObject({ kind: "unsafe", settleMs: 5500, resendWhenAbsent: true });
    expect(tools.get("retail.modify_user_address")).toMatchObject({ kind: "unsafe", settleMs: 5900 });
    expect(tools.get("retail.cancel_pending_order")).toMatchObject({ kind: "idempotent_by_key", settleMs: 5500 });
    // No probe: nothing to wait for, and never resent.
    expect(tools.get("airline.send_certificate")).toMatchObject({ kind: "unsafe", resendWhenAbsent: false });
    expect(tools.get("airline.send_certificate")?.settleMs).toBeUndefined();
    expect(tools.get("retail.get_order_details")?.settleMs).toBeUndefined();
  });

  it("declares no window for a remote whose lag is unbounded: unsafe tools are never resent on absence", () => {
    const tools = byName(tauBenchTools({ baseUrl: "http://127.0.0.1:1", realism, timing: "unbounded" }));
    for (const t of tools.values()) expect(t.settleMs, t.name).toBeUndefined();
    expect(tools.get("airline.cancel_reservation")).toMatchObject({ kind: "unsafe", resendWhenAbsent: false });
    expect(tools.get("retail.cancel_pending_order")).toMatchObject({ resendWhenAbsent: true }); // keyed
  });
});

describe("the window holds against the real service", () => {
  let running: Running | undefined;
  afterEach(async () => {
    await running?.service.close();
    running = undefined;
  });

  const LATENCY_MS = 300;
  const LAG_MS = 400;
  const CLIENT_TIMEOUT_MS = 100;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  /**
   * One unkeyed `airline.cancel_reservation` whose client gives up during the processing sleep, then
   * identity lookups at `checksAfterEndMs` after the attempt ended.
   */
  async function attempt(kind: FaultKind, checksAfterEndMs: number[]) {
    const faults = { rate: 1, mix: { [kind]: 1 }, lagMs: LAG_MS, hangMs: 5000, lagResponse: "hang" as const };
    running = await start({
      faults,
      realismOverrides: { "airline.cancel_reservation": { latencyMs: LATENCY_MS } },
    });
    const url = running.url;
    const since = Date.now();
    const outcome = await networkOutcome(
      post(`${url}/airline/tools/cancel_reservation`, '{"reservation_id": "4WQ150"}', {}, CLIENT_TIMEOUT_MS),
    );
    const endedAt = Date.now();
    const window = settleBoundMs({ latencyMs: LATENCY_MS }, faults);
    const seen: boolean[] = [];
    for (const ms of [...checksAfterEndMs, window]) {
      await sleep(Math.max(0, endedAt + ms - Date.now()));
      const r = await get(`${url}/airline/lookup/cancel_reservation?reservation_id=4WQ150&since=${since}`);
      seen.push(r.body.found === true);
    }
    await sleep(LATENCY_MS + LAG_MS); // anything still to land has landed
    const effects = ((await get(`${url}/airline/effects`)).body.effects as unknown[]).length;
    return { outcome, seen, effects, window };
  }

  it("lag: applied after the client gave up, hidden for lagMs; absent before the window, found at it", async () => {
    // ended ≈ t0+100; applied ≈ t0+300 (end+200); visible ≈ t0+700 (end+600); window = 300+400+500.
    const r = await attempt("lag", [50, 350]);
    expect(r.outcome).toBe("timeout");
    expect(r.window).toBe(1200);
    expect(r.effects).toBe(1);
    expect(r.seen).toEqual([false, false, true]);
  });

  it("504 and hang: applied after the client gave up (latency), visible at once; found at the window", async () => {
    for (const kind of ["504", "hang"] as const) {
      const r = await attempt(kind, [50]);
      expect(r.outcome, kind).toBe("timeout");
      expect(r.window, kind).toBe(LATENCY_MS + SETTLE_MARGIN_MS);
      expect(r.effects, kind).toBe(1);
      expect(r.seen, kind).toEqual([false, true]);
      await running?.service.close();
      running = undefined;
    }
  });

  it("refuse, 503, reset: nothing is ever applied", async () => {
    for (const kind of ["refuse", "503", "reset"] as const) {
      const r = await attempt(kind, []);
      expect(r.effects, kind).toBe(0);
      expect(r.seen, kind).toEqual([false]);
      await running?.service.close();
      running = undefined;
    }
  });
});
