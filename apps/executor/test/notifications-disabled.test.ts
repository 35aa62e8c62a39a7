/**
 * A channel disabled mid-burst (issue 23 §3 attack review), on a real PostgreSQL test database with a
 * real HTTP receiver: the grouped delivery still pending is not sent while the channel is disabled,
 * the envelope of a record entering the queue then says it waits (no operator notified), events raised
 * meanwhile are not queued for it, and re-enabling it sends the pending group — each event once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, type HttpReceiver, limbo, notifyEnv, startHttpReceiver } from "./notifications-support.ts";
import { type Json, startStack, type TestStack } from "./support.ts";

const WINDOW_MS = 1500;
let stack: TestStack;
let hook: HttpReceiver;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  hook = await startHttpReceiver();
  stack = await startStack({
    tools: () => [limbo],
    env: {
      ...notifyEnv(),
      TRISTATE_NOTIFY_GROUP_WINDOW_MS: String(WINDOW_MS),
    },
  });
});
afterAll(async () => {
  await stack?.close();
  await hook?.close();
});

const keysSent = () =>
  hook.arrivals.flatMap((a) => (JSON.parse(a.body) as Json).events.map((e: Json) => e.subject.key as string));

describe("a channel disabled mid-burst", () => {
  it("holds its pending group while disabled, says 'waits' meanwhile, sends the group once re-enabled", async () => {
    const tenant = "paused";
    const agent = (await stack.post("keys.create", { name: "a", role: "agent", tenant }, stack.keys.admin)).json.result
      .data.secret as string;
    const created = await stack.post(
      "notifications.channels.create",
      { tenant, kind: "webhook", name: "w", url: hook.url, events: ["human_queue"] },
      stack.keys.admin,
    );
    const channelId = created.json.result.data.channel.id as string;
    const call = async (id: string) =>
      (await stack.post("calls.execute", { runId: "r", stepId: id, tool: "limbo", args: { id } }, agent)).json.result
        .data as Json;
    const first = await call("b-0");
    expect(first.action_taken).toContain("an operator has been notified");
    await eventually(() => hook.arrivals.length === 1, 10_000, "the first event, at once");
    const burst = await Promise.all(Array.from({ length: 10 }, (_, i) => call(`b-${i + 1}`)));
    // Fanned out into one group (due when the window ends), then the channel is disabled.
    await eventually(
      async () => {
        const { rows } = await stack.service.services.store.pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM notification_events WHERE tenant = $1 AND NOT fanned_out",
          [tenant],
        );
        return rows[0]!.n === 0;
      },
      10_000,
      "the burst fanned out",
    );
    const off = await stack.post(
      "notifications.channels.update",
      { tenant, id: channelId, enabled: false },
      stack.keys.admin,
    );
    expect(off.json.result.data.channel.enabled).toBe(false);
    const meanwhile = await call("while-off");
    expect(meanwhile.action_taken).toContain("waits in the human queue");
    expect(meanwhile.action_taken).not.toContain("notified");
    await sleep(WINDOW_MS + 1000);
    expect(hook.arrivals).toHaveLength(1);
    const log = (await stack.get("notifications.deliveries.list", { tenant, channelId }, stack.keys.admin)).json.result
      .data.items as Json[];
    expect(log.map((d) => d.status).sort()).toStrictEqual(["delivered", "pending"]);

    await stack.post("notifications.channels.update", { tenant, id: channelId, enabled: true }, stack.keys.admin);
    await eventually(() => hook.arrivals.length === 2, 10_000, "the held group after re-enabling");
    const sent = keysSent();
    expect(new Set(sent).size).toBe(sent.length);
    expect(new Set(sent)).toStrictEqual(new Set([first, ...burst].map((e) => e.idempotency_key as string)));
    // The record that entered the queue while the channel was disabled was not queued for it.
    expect(sent).not.toContain(meanwhile.idempotency_key);
  });
});
