/**
 * Notifications across a restart (issue 23 §3), on a real PostgreSQL test database with a real HTTP
 * receiver: a webhook notification left UNKNOWN by one service (its receiver answered 500) is
 * reconciled by another service's sweeper — a fresh process that never claimed the delivery — which
 * reads the channel's URL and secret from the database and resends with the same Idempotency-Key and
 * a valid signature. A deleted channel's record is not sent again (not sent, the reason named).
 */
import { Deadline } from "@tristate/core";
import { createTestDatabase, type TestDatabase } from "@tristate/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readEnv } from "../src/env.ts";
import { type RunningService, startService } from "../src/service.ts";
import {
  eventually,
  type HttpReceiver,
  LOOPBACK_RECEIVERS,
  limbo,
  signatureValid,
  startHttpReceiver,
} from "./notifications-support.ts";

let testDb: TestDatabase;
let receiver: HttpReceiver;
const services: RunningService[] = [];

async function start(env: Record<string, string>): Promise<RunningService> {
  const service = await startService(
    readEnv({
      DATABASE_URL: testDb.url,
      PORT: "0",
      LOG_LEVEL: "silent",
      TRISTATE_SWEEP_INTERVAL_MS: "0",
      TRISTATE_NOTIFY_ALLOW_HOSTS: LOOPBACK_RECEIVERS,
      ...env,
    }),
    { tools: [limbo] },
  );
  services.push(service);
  return service;
}

async function stop(service: RunningService): Promise<void> {
  services.splice(services.indexOf(service), 1);
  await service.close();
}

/** The notification record of `channelId`'s delivery `deliveryId`. */
async function record(service: RunningService, channelId: string, deliveryId: string) {
  const { rows } = await service.services.store.pool.query<{
    status: string;
    error: unknown;
    args: Record<string, unknown>;
  }>("SELECT status, error, args FROM intent_records WHERE run_id = $1 AND step_id = $2", [
    `notify:${channelId}`,
    deliveryId,
  ]);
  return rows[0];
}

/** Makes the record of `deliveryId` due for the sweeper now (as if its re-check time had come). */
async function dueNow(service: RunningService, deliveryId: string): Promise<void> {
  await service.services.store.pool.query(
    `UPDATE intent_records SET recheck_at = now() - interval '1 second', lease_until_at = now() - interval '1 second'
     WHERE step_id = $1`,
    [deliveryId],
  );
}

beforeAll(async () => {
  testDb = await createTestDatabase();
  receiver = await startHttpReceiver();
});
afterAll(async () => {
  for (const s of [...services]) await stop(s);
  await receiver?.close();
  await testDb?.drop();
});

/** Service A sends a delivery to `channelId` that stays UNKNOWN (the receiver answers 500), then dies. */
async function leaveUnknown(tenant: string): Promise<{ channelId: string; secret: string; deliveryId: string }> {
  const a = await start({ TRISTATE_NOTIFY_INTERVAL_MS: "100", TRISTATE_NOTIFY_GROUP_WINDOW_MS: "0" });
  const { channel, secret } = await a.services.db
    .notifications(tenant)
    .createChannel({ kind: "webhook", name: "hook", url: receiver.url, events: ["human_queue"] });
  receiver.answers.push(...Array.from({ length: 50 }, () => 500));
  const before = receiver.arrivals.length;
  await a.services.tenants.executor(tenant).call({
    runId: "run",
    stepId: `${tenant}-1`,
    tool: "limbo",
    args: { id: tenant },
    deadline: Deadline.after(10_000),
  });
  const first = await eventually(() => receiver.arrivals[before], 10_000, "the first (500) arrival");
  const deliveryId = first.headers["idempotency-key"] as string;
  await eventually(
    async () => (await record(a, channel.id, deliveryId))?.status === "UNKNOWN",
    10_000,
    "the record UNKNOWN",
  );
  // The sweeper sweeps tenants that have keys; and time passes: the record is due for a re-check.
  await a.services.keys.create({ name: `${tenant} agent`, role: "agent", tenant });
  await stop(a);
  receiver.answers.length = 0;
  return { channelId: channel.id, secret: secret!, deliveryId };
}

describe("a webhook notification left UNKNOWN, after a restart", () => {
  it("another service's sweeper resends it from the database's channel: same Idempotency-Key, valid signature, SUCCEEDED", async () => {
    const { channelId, secret, deliveryId } = await leaveUnknown("restarted");
    const seen = receiver.arrivals.length;
    // A fresh service: no delivery loop (it never claims the delivery), only the sweeper.
    const b = await start({ TRISTATE_NOTIFY_INTERVAL_MS: "0", TRISTATE_SWEEP_INTERVAL_MS: "100" });
    await dueNow(b, deliveryId);
    const resent = await eventually(
      () => receiver.arrivals.slice(seen).find((r) => r.status === 200),
      20_000,
      "the sweeper's resend",
    );
    expect(resent.headers["idempotency-key"]).toBe(deliveryId);
    expect(signatureValid(secret, resent.headers["tristate-signature"] as string, resent.body)).toBe(true);
    expect(JSON.parse(resent.body).id).toBe(deliveryId);
    await eventually(
      async () => (await record(b, channelId, deliveryId))?.status === "SUCCEEDED",
      10_000,
      "the record SUCCEEDED",
    );
    await stop(b);
  });

  it("a deleted channel's record is not sent again: not sent, naming the deletion", async () => {
    const { channelId, deliveryId } = await leaveUnknown("deleted");
    const b = await start({ TRISTATE_NOTIFY_INTERVAL_MS: "0", TRISTATE_SWEEP_INTERVAL_MS: "100" });
    expect(await b.services.db.notifications("deleted").deleteChannel(channelId)).toBe(true);
    const seen = receiver.arrivals.length;
    const envelope = await b.services.tenants.executor("deleted").callInternal({
      runId: `notify:${channelId}`,
      stepId: deliveryId,
      tool: "tristate.notify.webhook",
      args: (await record(b, channelId, deliveryId))!.args,
      deadline: Deadline.after(10_000),
    });
    expect(JSON.stringify(envelope)).toMatch(/was deleted/);
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.arrivals.length).toBe(seen);
    await stop(b);
  });
});
