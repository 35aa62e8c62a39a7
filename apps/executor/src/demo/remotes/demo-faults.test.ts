import { afterEach, describe, expect, it } from "vitest";
import {
  DEMO_FAULT_KINDS,
  DEMO_LAG_MS,
  type DemoFaultKind,
  DemoFaultsError,
  demoFaultPicker,
  demoFaultsFromEnv,
  describeDemoFaults,
  parseDemoFaults,
  parseDemoFaultsSeed,
} from "./demo-faults.ts";
import { type FakeRemote, startFakeRemote } from "./fake-remote.ts";

describe("TRISTATE_DEMO_FAULTS", () => {
  it("is off when unset, empty or off", () => {
    expect(parseDemoFaults(undefined)).toEqual({});
    expect(parseDemoFaults(" ")).toEqual({});
    expect(parseDemoFaults("off")).toEqual({});
  });

  it("reads a comma list of kind=rate", () => {
    expect(parseDemoFaults("timeout-after-commit=0.1, reset-before-commit=0.05,504-after-commit=.05,lag=0")).toEqual({
      "timeout-after-commit": 0.1,
      "reset-before-commit": 0.05,
      "504-after-commit": 0.05,
      lag: 0,
    });
    expect(parseDemoFaults("reset-after-commit=1")).toEqual({ "reset-after-commit": 1 });
  });

  it("`on` turns every kind on, about one POST in five", () => {
    const rates = parseDemoFaults("on");
    expect(Object.keys(rates).sort()).toEqual([...DEMO_FAULT_KINDS].sort());
    const total = Object.values(rates).reduce((a, b) => a + b, 0);
    expect(total).toBeGreaterThan(0.2);
    expect(total).toBeLessThan(0.3);
  });

  it.each([
    ["timeout=0.1", /unknown fault "timeout"; the kinds are timeout-after-commit, reset-before-commit/],
    ["lag", /"lag" is not <kind>=<rate>/],
    ["lag=0.1,,reset-after-commit=0.1", /"" is not <kind>=<rate>/],
    ["lag=1.5", /the rate of "lag" must be a decimal from 0 to 1, not "1.5"/],
    ["lag=-0.1", /must be a decimal from 0 to 1, not "-0.1"/],
    ["lag=10%", /not "10%"/],
    ["lag=0.1,lag=0.2", /"lag" is given twice/],
    ["lag=0.6,504-after-commit=0.5", /the rates add up to 1.1; at most 1 is allowed/],
  ])("refuses %s, naming the setting and the rule", (text, message) => {
    expect(() => parseDemoFaults(text)).toThrow(DemoFaultsError);
    expect(() => parseDemoFaults(text)).toThrow(/^TRISTATE_DEMO_FAULTS: /);
    expect(() => parseDemoFaults(text)).toThrow(message);
  });

  it("TRISTATE_DEMO_FAULTS_SEED: an unsigned 32-bit integer, or unset", () => {
    expect(parseDemoFaultsSeed(undefined)).toBeNull();
    expect(parseDemoFaultsSeed("")).toBeNull();
    expect(parseDemoFaultsSeed("42")).toBe(42);
    expect(parseDemoFaultsSeed("4294967295")).toBe(4294967295);
    for (const bad of ["-1", "1.5", "4294967296", "x"]) {
      expect(() => parseDemoFaultsSeed(bad)).toThrow(
        /^TRISTATE_DEMO_FAULTS_SEED: must be an integer from 0 to 4294967295/,
      );
    }
    expect(demoFaultsFromEnv({ TRISTATE_DEMO_FAULTS: "lag=0.5", TRISTATE_DEMO_FAULTS_SEED: "7" })).toEqual({
      rates: { lag: 0.5 },
      seed: 7,
    });
  });

  it("describes itself for the start-up banner", () => {
    expect(describeDemoFaults({})).toBe("off");
    expect(describeDemoFaults({ lag: 0.1, "timeout-after-commit": 0.05 })).toBe("timeout-after-commit 5 %, lag 10 %");
  });
});

describe("the fault picker", () => {
  it("draws each kind at its rate", () => {
    const rates = { "timeout-after-commit": 0.2, lag: 0.1 } as const;
    const pick = demoFaultPicker(rates, 1);
    const counts = new Map<DemoFaultKind | undefined, number>();
    const n = 20_000;
    for (let i = 0; i < n; i++) {
      const k = pick();
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    expect((counts.get("timeout-after-commit") ?? 0) / n).toBeCloseTo(0.2, 1);
    expect((counts.get("lag") ?? 0) / n).toBeCloseTo(0.1, 1);
    expect((counts.get(undefined) ?? 0) / n).toBeCloseTo(0.7, 1);
    expect(counts.has("reset-before-commit")).toBe(false);
  });

  it("repeats itself under a seed, and never fires when off", () => {
    const draw = (seed: number) => {
      const pick = demoFaultPicker({ lag: 0.3, "504-after-commit": 0.3 }, seed);
      return Array.from({ length: 50 }, pick);
    };
    expect(draw(9)).toEqual(draw(9));
    expect(draw(9)).not.toEqual(draw(10));
    const off = demoFaultPicker({}, 3);
    expect(Array.from({ length: 100 }, off).every((k) => k === undefined)).toBe(true);
  });
});

describe("each fault on the example remote", () => {
  let remote: FakeRemote | undefined;
  afterEach(async () => {
    await remote?.close();
    remote = undefined;
  });

  async function remoteWith(kind: DemoFaultKind, honorsKey = true): Promise<FakeRemote> {
    remote = await startFakeRemote({ honorsKey, randomFaults: { rates: { [kind]: 1 }, seed: 1 } });
    return remote;
  }

  const post = (r: FakeRemote, key: string, timeoutMs = 2_000) =>
    fetch(`${r.url}/effects`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": key },
      body: JSON.stringify({ order_id: "A-1", amount: "1.00" }),
      signal: AbortSignal.timeout(timeoutMs),
    });

  const lookup = async (r: FakeRemote, key: string) =>
    (await (await fetch(`${r.url}/effects?clientRef=${key}`)).json()) as unknown[];

  it("timeout-after-commit: the effect is made, the caller times out", async () => {
    const r = await remoteWith("timeout-after-commit");
    await expect(post(r, "k1", 300)).rejects.toMatchObject({ name: "TimeoutError" });
    expect(r.effects).toHaveLength(1);
    expect(await lookup(r, "k1")).toHaveLength(1);
    expect(r.injected).toEqual({ "timeout-after-commit": 1 });
  });

  it("reset-before-commit: the connection resets, nothing was made", async () => {
    const r = await remoteWith("reset-before-commit");
    await expect(post(r, "k1")).rejects.toThrow(/fetch failed/);
    expect(r.effects).toHaveLength(0);
    expect(await lookup(r, "k1")).toEqual([]);
  });

  it("reset-after-commit: the connection resets after the effect was made", async () => {
    const r = await remoteWith("reset-after-commit");
    await expect(post(r, "k1")).rejects.toThrow(/fetch failed/);
    expect(r.effects).toHaveLength(1);
    expect(await lookup(r, "k1")).toHaveLength(1);
  });

  it("504-after-commit: a 504 although the effect was made; a resend with the key is deduped", async () => {
    const r = await remoteWith("504-after-commit");
    expect((await post(r, "k1")).status).toBe(504);
    expect(r.effects).toHaveLength(1);
    // The key was stored with the committed effect: the resend replays it, no second effect.
    const again = await post(r, "k1");
    expect(again.status).toBe(201);
    expect(r.effects).toHaveLength(1);
  });

  it("lag: a 504, and lookups see the effect only after the lag", async () => {
    const r = await remoteWith("lag", false);
    const sentAt = Date.now();
    expect((await post(r, "k1")).status).toBe(504);
    expect(r.effects).toHaveLength(1);
    expect(await lookup(r, "k1")).toEqual([]);
    await new Promise((done) => setTimeout(done, DEMO_LAG_MS - (Date.now() - sentAt) + 50));
    expect(await lookup(r, "k1")).toHaveLength(1);
  });

  it("POST /__faults switches the rates at run time, and refuses a bad value", async () => {
    const r = await remoteWith("504-after-commit");
    const bad = await fetch(`${r.url}/__faults`, { method: "POST", body: "lag=2" });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/^TRISTATE_DEMO_FAULTS: the rate of "lag"/);
    expect((await post(r, "k1")).status).toBe(504);
    const off = await fetch(`${r.url}/__faults`, { method: "POST", body: "off" });
    expect(await off.json()).toEqual({ faults: {} });
    expect((await post(r, "k2")).status).toBe(201);
    expect(r.effects).toHaveLength(2);
  });

  it("POST /__faults with an Origin header (a web page) is 403 naming why, and the faults stay", async () => {
    const r = await remoteWith("504-after-commit");
    const page = await fetch(`${r.url}/__faults`, {
      method: "POST",
      body: "off",
      headers: { origin: "http://evil.example", "content-type": "text/plain" },
    });
    expect(page.status).toBe(403);
    expect(((await page.json()) as { error: string }).error).toMatch(/Origin header/);
    expect((await post(r, "k1")).status).toBe(504);
  });
});
