/**
 * Issue 22 §3 attack on the example remotes' fault switch at run time (`POST /__faults`): it listens
 * on loopback only, and a bad body is a 400 naming the rule that changes nothing (the faults in force
 * stay in force).
 */
import { networkInterfaces } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FakeRemote, startFakeRemote } from "../src/demo/remotes/fake-remote.ts";

let remote: FakeRemote;
beforeAll(async () => {
  remote = await startFakeRemote({ randomFaults: { rates: { "504-after-commit": 1 }, seed: 1 } });
});
afterAll(async () => {
  await remote?.close();
});

const faults = (body: string) => fetch(`${remote.url}/__faults`, { method: "POST", body });
let n = 0;
const post = () =>
  fetch(`${remote.url}/effects`, {
    method: "POST",
    headers: { "content-type": "application/json", "idempotency-key": `k-${++n}` },
    body: JSON.stringify({ order_id: "A-1", amount: "1.00" }),
  });

describe("POST /__faults", () => {
  it("bad bodies: 400 with the rule, and the faults in force are unchanged", async () => {
    const bad: [string, RegExp][] = [
      ["lag=2", /rate of "lag" must be a decimal from 0 to 1/],
      ["lag=NaN", /rate of "lag"/],
      ["lag=-0.1", /rate of "lag"/],
      ["lag=1e-1", /rate of "lag"/],
      ["lag=0.5,lag=0.1", /"lag" is given twice/],
      ["lag=0.6,reset-before-commit=0.6", /add up to 1\.2; at most 1/],
      ["on,lag=0.1", /is not <kind>=<rate>/],
      ["__proto__=0.1", /unknown fault "__proto__"/],
      ["constructor=1", /unknown fault "constructor"/],
      ["x".repeat(100_000), /is not <kind>=<rate>/],
      ["lag=0.1\u0000", /rate of "lag"/],
    ];
    for (const [body, rule] of bad) {
      const res = await faults(body);
      expect(res.status, body.slice(0, 40)).toBe(400);
      expect(((await res.json()) as { error: string }).error, body.slice(0, 40)).toMatch(rule);
      expect((await post()).status, `after ${body.slice(0, 40)}`).toBe(504);
    }
  });

  it("listens on loopback only: no other address of this machine answers", async () => {
    const { port } = new URL(remote.url);
    const others = Object.values(networkInterfaces())
      .flat()
      .filter((a) => a && a.family === "IPv4" && !a.internal)
      .map((a) => a!.address);
    for (const address of others) {
      await expect(
        fetch(`http://${address}:${port}/__faults`, { method: "POST", body: "off", signal: AbortSignal.timeout(2000) }),
      ).rejects.toThrow();
    }
    expect(remote.url).toMatch(/^http:\/\/127\.0\.0\.1:/);
  });
});
