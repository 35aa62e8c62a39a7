/**
 * Awkward webhook receivers (issue 23 §3 attack review), on a real PostgreSQL test database with real
 * node:http servers: one that hangs (the send's own deadline ends the attempt UNKNOWN well inside the
 * 20 s delivery lease, and the resend carries the same Idempotency-Key), one that answers 301 (a
 * redirect is not followed: UNKNOWN, resent with the same key to the channel's own URL), one that
 * answers 410 (not delivered: retried later, the error in the log).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, LOOPBACK_RECEIVERS } from "./notifications-support.ts";
import { type Json, startStack, type TestStack } from "./support.ts";

let stack: TestStack;
const closers: Array<() => Promise<void>> = [];

/** A receiver answering each request with `answer(n)` (n: 0-based request number); records keys and times. */
async function receiver(answer: (n: number, res: ServerResponse) => void) {
  const seen: Array<{ key: string; at: number; url: string }> = [];
  const server = createServer((req: IncomingMessage, res) => {
    req.resume();
    req.on("end", () => {
      seen.push({ key: String(req.headers["idempotency-key"]), at: Date.now(), url: req.url ?? "" });
      answer(seen.length - 1, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, seen };
}

beforeAll(async () => {
  stack = await startStack({
    env: { TRISTATE_NOTIFY_ALLOW_HOSTS: LOOPBACK_RECEIVERS, TRISTATE_NOTIFY_INTERVAL_MS: "100" },
  });
  await stack.post("keys.create", { name: "a", role: "agent", tenant: "recv" }, stack.keys.admin);
});
afterAll(async () => {
  await stack?.close();
  for (const close of closers) await close();
});

async function testDelivery(url: string): Promise<{ channelId: string; deliveryId: string }> {
  const created = await stack.post(
    "notifications.channels.create",
    { tenant: "recv", kind: "webhook", name: "r", url },
    stack.keys.admin,
  );
  expect(created.status, JSON.stringify(created.json)).toBe(200);
  const channelId = created.json.result.data.channel.id as string;
  const sent = await stack.post("notifications.channels.test", { tenant: "recv", id: channelId }, stack.keys.admin);
  return { channelId, deliveryId: sent.json.result.data.deliveryId as string };
}

const delivery = async (channelId: string): Promise<Json> =>
  (await stack.get("notifications.deliveries.list", { tenant: "recv", channelId }, stack.keys.admin)).json.result.data
    .items[0];

describe("awkward receivers", () => {
  it("a receiver that hangs: the attempt ends UNKNOWN inside the lease; the next send has the same key and delivers", async () => {
    const r = await receiver((n, res) => {
      if (n > 0) res.writeHead(200).end("ok");
      // n = 0: never answered (held until the test closes the server)
    });
    const { channelId, deliveryId } = await testDelivery(r.url);
    await eventually(() => r.seen.length >= 1, 10_000, "the first send");
    const first = r.seen[0]!.at;
    const done = await eventually(
      async () => {
        const d = await delivery(channelId);
        return d?.status === "delivered" ? d : undefined;
      },
      40_000,
      "delivered after the hang",
    );
    // The hung attempt's result was recorded before the lease (20 s) could pass: the repeat came from
    // the same worker's reconciliation or the next attempt, never from a second worker mid-send.
    expect(r.seen[1]!.at - first).toBeLessThan(20_000);
    expect(new Set(r.seen.map((s) => s.key))).toStrictEqual(new Set([deliveryId]));
    expect(done.id).toBe(deliveryId);
    console.log(`[receivers] hang: resent after ${r.seen[1]!.at - first} ms, ${done.attempts} attempt(s)`);
  }, 60_000);

  it("a receiver answering 301: not followed, resent to the channel's URL with the same key", async () => {
    const r = await receiver((n, res) => {
      if (n === 0) res.writeHead(301, { location: "http://127.0.0.1:9/elsewhere" }).end();
      else res.writeHead(200).end("ok");
    });
    const { channelId, deliveryId } = await testDelivery(r.url);
    await eventually(async () => (await delivery(channelId))?.status === "delivered", 20_000, "delivered after a 301");
    expect(r.seen.map((s) => s.url)).toStrictEqual(["/hook", "/hook"]);
    expect(new Set(r.seen.map((s) => s.key))).toStrictEqual(new Set([deliveryId]));
  });

  it("a receiver answering 410: not delivered, retried later with the error in the log", async () => {
    const r = await receiver((_n, res) => res.writeHead(410).end("gone"));
    const { channelId } = await testDelivery(r.url);
    const d = await eventually(
      async () => {
        const got = await delivery(channelId);
        return got?.lastError ? got : undefined;
      },
      10_000,
      "the refusal logged",
    );
    expect(d.status).toBe("pending");
    expect(d.lastError).toMatch(/FAILED_NO_EFFECT.*410/);
    expect(d.nextAttemptAtEpochMs).toBeGreaterThan(Date.now());
  });
});
