/**
 * Notifications end to end (issue 23 §3), on a real PostgreSQL test database with real receivers: a
 * record entering the human queue reaches a signed webhook (node:http), a Slack-format receiver and a
 * real SMTP server (`smtp-server`) within seconds; a receiver that is down gets the event later; a
 * burst of 500 queue entries becomes a few grouped deliveries; "send test" works; the envelope says an
 * operator was notified only when a channel receives the human queue. Each scenario has its own tenant.
 */
import { Deadline } from "@tristate/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  eventually,
  type HttpReceiver,
  limbo,
  type Mail,
  notifyEnv,
  signatureValid,
  startHttpReceiver,
  startSmtpServer,
} from "./notifications-support.ts";
import { freePort } from "./processes.ts";
import { type Json, startStack, type TestStack } from "./support.ts";

const DASHBOARD = "http://dash.test:3000";
let stack: TestStack;
let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
const receivers: HttpReceiver[] = [];
const agents = new Map<string, string>();

beforeAll(async () => {
  smtp = await startSmtpServer();
  stack = await startStack({
    tools: () => [limbo],
    env: {
      ...notifyEnv(),
      TRISTATE_NOTIFY_GROUP_WINDOW_MS: "3000",
      TRISTATE_SMTP_URL: smtp.url,
      TRISTATE_SMTP_FROM: "Tristate <alerts@tristate.test>",
      TRISTATE_DASHBOARD_URL: DASHBOARD,
    },
  });
});
afterAll(async () => {
  await stack?.close();
  await Promise.all(receivers.map((r) => r.close()));
  await smtp?.close();
});

async function receiver(port = 0): Promise<HttpReceiver> {
  const r = await startHttpReceiver(port);
  receivers.push(r);
  return r;
}

/** An agent key of `tenant` (the tenant exists from then on). */
async function agentOf(tenant: string): Promise<string> {
  let key = agents.get(tenant);
  if (!key) {
    const res = await stack.post("keys.create", { name: `${tenant} agent`, role: "agent", tenant }, stack.keys.admin);
    key = res.json.result.data.secret as string;
    agents.set(tenant, key);
  }
  return key;
}

/** A call of `tenant` that goes to the human queue; its envelope. */
async function queued(tenant: string, id: string): Promise<Json> {
  const res = await stack.post(
    "calls.execute",
    { runId: `run-${tenant}`, stepId: id, tool: "limbo", args: { id } },
    await agentOf(tenant),
  );
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  expect(res.json.result.data).toMatchObject({ status: "UNKNOWN", resolution: "needs_human" });
  return res.json.result.data;
}

async function channel(
  tenant: string,
  input: Record<string, unknown>,
): Promise<{ channel: Json; secret: string | null }> {
  await agentOf(tenant);
  const res = await stack.post(
    "notifications.channels.create",
    { tenant, name: `${tenant} channel`, ...input },
    stack.keys.admin,
  );
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json.result.data;
}

const bodies = (r: HttpReceiver) => r.arrivals.map((a) => ({ ...a, json: JSON.parse(a.body) as Json }));
const deliveries = async (tenant: string, channelId: string): Promise<Json[]> =>
  (await stack.get("notifications.deliveries.list", { tenant, channelId, limit: 200 }, stack.keys.admin)).json.result
    .data.items;

describe("a record entering the human queue", () => {
  it("reaches a webhook within seconds: signed, Idempotency-Key = delivery id, linking the record; sent through the executor", async () => {
    // A tenant without a channel: the record waits in the human queue, nobody is told.
    const unheard = await queued("unheard", "q-1");
    expect(unheard.action_taken).toContain("waits in the human queue");
    expect(unheard.action_taken).not.toContain("notified");
    const hook = await receiver();
    const { channel: ch, secret } = await channel("hooked", {
      kind: "webhook",
      url: hook.url,
      events: ["human_queue"],
    });
    const started = Date.now();
    const record = await queued("hooked", "after-channel");
    expect(record.action_taken).toContain("an operator has been notified");
    const arrival = await eventually(
      () => bodies(hook).find((a) => a.json.events.some((e: Json) => e.subject.key === record.idempotency_key)),
      10_000,
      "the webhook",
    );
    const latencyMs = Date.now() - started;
    console.log(`[notifications] webhook latency from the call's answer: ${latencyMs} ms`);
    expect(latencyMs).toBeLessThan(5000);
    expect(signatureValid(secret!, arrival.headers["tristate-signature"] as string, arrival.body)).toBe(true);
    expect(signatureValid("whsec_wrong", arrival.headers["tristate-signature"] as string, arrival.body)).toBe(false);
    expect(arrival.headers["idempotency-key"]).toBe(arrival.json.id);
    expect(arrival.json.id).toMatch(/^ndl_/);
    expect(arrival.json).toMatchObject({ type: "human_queue", tenant: "hooked" });
    const event = arrival.json.events.find((e: Json) => e.subject.key === record.idempotency_key);
    expect(event.id).toMatch(/^nev_/);
    expect(event.url).toBe(`${DASHBOARD}/intents/${record.idempotency_key}`);
    expect(event.subject).toMatchObject({ tool: "limbo", runId: "run-hooked" });
    const log = await eventually(async () =>
      (await deliveries("hooked", ch.id)).find((d) => d.id === arrival.json.id && d.status === "delivered"),
    );
    expect(log.attempts).toBe(1);
    // The notification is itself an intent record of the tenant: run notify:<channel>, step = delivery id.
    const { rows } = await stack.service.services.store.pool.query<{ status: string; tool: string; tenant: string }>(
      "SELECT status, tool, tenant FROM intent_records WHERE run_id = $1 AND step_id = $2",
      [`notify:${ch.id}`, arrival.json.id],
    );
    expect(rows).toStrictEqual([{ status: "SUCCEEDED", tool: "tristate.notify.webhook", tenant: "hooked" }]);
  });

  it("reaches a Slack incoming webhook in Slack's format, linking the record", async () => {
    const slack = await receiver();
    await channel("slacked", { kind: "slack", url: slack.url });
    const record = await queued("slacked", "s-1");
    const arrival = await eventually(
      () => bodies(slack).find((a) => a.body.includes(record.idempotency_key)),
      10_000,
      "slack",
    );
    expect(arrival.headers["content-type"]).toContain("application/json");
    expect(typeof arrival.json.text).toBe("string");
    expect(arrival.json.text).toContain("waiting for a person");
    expect(Array.isArray(arrival.json.blocks)).toBe(true);
    expect(arrival.json.blocks[0]).toMatchObject({ type: "section", text: { type: "mrkdwn" } });
    expect(JSON.stringify(arrival.json.blocks)).toContain(`<${DASHBOARD}/intents/${record.idempotency_key}|`);
    // Slack has no idempotency key: no header pretends it has.
    expect(arrival.headers["tristate-signature"]).toBeUndefined();
  });

  it("reaches an SMTP server as an e-mail whose Message-ID is derived from the delivery id", async () => {
    await channel("mailed", { kind: "email", to: ["ops@mailed.test", "oncall@mailed.test"] });
    const record = await queued("mailed", "m-1");
    const mail: Mail = await eventually(
      () => smtp.mails.find((m) => m.raw.includes(record.idempotency_key)),
      10_000,
      "the e-mail",
    );
    expect(mail.to.sort()).toStrictEqual(["oncall@mailed.test", "ops@mailed.test"]);
    expect(mail.from).toBe("alerts@tristate.test");
    const header = (name: string) => new RegExp(`^${name}: (.*)$`, "im").exec(mail.raw)?.[1]?.trim();
    const delivery = header("X-Tristate-Delivery");
    expect(delivery).toMatch(/^ndl_/);
    expect(header("Message-ID")).toBe(`<${delivery}@tristate.test>`);
    expect(header("Subject")).toContain("waiting for a person");
    expect(mail.raw).toContain(`${DASHBOARD}/intents/${record.idempotency_key}`);
  });
});

describe("delivery", () => {
  it("a receiver that is down (connection refused, then 500) gets the event later, under the same Idempotency-Key", async () => {
    const port = await freePort();
    const { channel: ch } = await channel("flaky", { kind: "webhook", url: `http://127.0.0.1:${port}/hook` });
    const record = await queued("flaky", "f-1");
    const refused = await eventually(
      async () => (await deliveries("flaky", ch.id)).find((d) => d.lastError !== null),
      10_000,
      "a refused attempt",
    );
    expect(refused.status).toBe("pending");
    expect(refused.lastError).toMatch(/FAILED_NO_EFFECT/);
    const hook = await receiver(port);
    hook.answers.push(500);
    const ok = await eventually(
      () => hook.arrivals.find((a) => a.status === 200),
      20_000,
      "the event after the receiver came back",
    );
    expect(hook.arrivals[0]!.status).toBe(500);
    expect(new Set(hook.arrivals.map((a) => a.headers["idempotency-key"]))).toStrictEqual(new Set([refused.id]));
    expect(ok.body).toBe(hook.arrivals[0]!.body);
    expect(JSON.parse(ok.body).events[0].subject.key).toBe(record.idempotency_key);
    const done = await eventually(async () =>
      (await deliveries("flaky", ch.id)).find((d) => d.id === refused.id && d.status === "delivered"),
    );
    console.log(
      `[notifications] down receiver: delivered after ${done.attempts} attempts (arrivals: ${hook.arrivals.map((a) => a.status).join(", ")})`,
    );
    // Refused (not sent), then a 500 (UNKNOWN) that reconciliation resent with the same key: 200.
    expect(done.attempts).toBeGreaterThanOrEqual(2);
    expect(hook.arrivals.map((a) => a.status)).toStrictEqual([500, 200]);
  });

  it("a burst of 500 records entering the queue becomes a few grouped deliveries carrying every event once", async () => {
    const hook = await receiver();
    await channel("burst", { kind: "webhook", url: hook.url });
    const executor = stack.service.services.tenants.executor("burst");
    const started = Date.now();
    for (let i = 0; i < 500; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          executor.call({
            runId: "run-burst",
            stepId: `b-${i + j}`,
            tool: "limbo",
            args: { id: `b-${i + j}` },
            deadline: Deadline.after(10_000),
          }),
        ),
      );
    }
    const burstMs = Date.now() - started;
    const keys = await eventually(
      () => {
        const seen = new Set(bodies(hook).flatMap((a) => a.json.events.map((e: Json) => e.subject.key as string)));
        return seen.size >= 500 ? seen : undefined;
      },
      30_000,
      "all 500 events",
    );
    const delivered = bodies(hook).filter((a) => a.status === 200);
    const events = delivered.flatMap((a) => a.json.events.map((e: Json) => e.id as string));
    console.log(
      `[notifications] burst: 500 records in ${burstMs} ms -> ${delivered.length} deliveries (${delivered.map((a) => a.json.count).join(", ")} events)`,
    );
    expect(keys.size).toBe(500);
    expect(new Set(events).size).toBe(events.length);
    expect(delivered.length).toBeLessThanOrEqual(10);
    expect(delivered.length).toBeGreaterThanOrEqual(1);
  });

  it("send test: the test event reaches the channel, delivery id as Idempotency-Key", async () => {
    const hook = await receiver();
    const { channel: ch, secret } = await channel("tested", { kind: "webhook", url: hook.url });
    const res = await stack.post("notifications.channels.test", { tenant: "tested", id: ch.id }, stack.keys.admin);
    expect(res.status).toBe(200);
    const { deliveryId, eventId } = res.json.result.data;
    const arrival = await eventually(
      () => bodies(hook).find((a) => a.json.id === deliveryId),
      10_000,
      "the test event",
    );
    expect(arrival.json.type).toBe("test");
    expect(arrival.json.events.map((e: Json) => e.id)).toStrictEqual([eventId]);
    expect(arrival.headers["idempotency-key"]).toBe(deliveryId);
    expect(signatureValid(secret!, arrival.headers["tristate-signature"] as string, arrival.body)).toBe(true);
  });
});
