/**
 * A notification about a record of a tool with `secretFields` leaks no secret argument value (issue
 * 23 §3 attack review): the tool's error message echoes the card number; the webhook body sent (and
 * kept as the notification record's arguments, which viewers read) withholds the message, the Slack
 * message shows no message at all. Real PostgreSQL, real HTTP receivers.
 */
import { AmbiguousError, canon, Deadline, defineTool } from "@tristate/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MESSAGE_WITHHELD } from "../src/notifications/render.ts";
import { eventually, type HttpReceiver, LOOPBACK_RECEIVERS, startHttpReceiver } from "./notifications-support.ts";
import { startStack, type TestStack } from "./support.ts";

const CARD = "4111111111111111";
/** An unsafe tool whose ambiguous failure echoes its secret argument. */
const charge = defineTool({
  name: "charge_card",
  kind: "unsafe",
  identity: { order: canon.exact },
  secretFields: ["card"],
  timeoutMs: 2000,
  invoke: async (args: Record<string, unknown>) => {
    throw new AmbiguousError(`gateway reset while charging card ${String(args.card)}`, { code: "RESET_AFTER_WRITE" });
  },
});

let stack: TestStack;
let hook: HttpReceiver;
let slack: HttpReceiver;

beforeAll(async () => {
  hook = await startHttpReceiver();
  slack = await startHttpReceiver();
  stack = await startStack({
    tools: () => [charge],
    env: { TRISTATE_NOTIFY_ALLOW_HOSTS: LOOPBACK_RECEIVERS, TRISTATE_NOTIFY_INTERVAL_MS: "100" },
  });
});
afterAll(async () => {
  await stack?.close();
  await hook?.close();
  await slack?.close();
});

describe("secret arguments in notifications", () => {
  it("the webhook body, the Slack message and the notification records hold no secret value", async () => {
    const tenant = "secrets";
    await stack.post("keys.create", { name: "a", role: "agent", tenant }, stack.keys.admin);
    for (const [kind, r] of [
      ["webhook", hook],
      ["slack", slack],
    ] as const) {
      const res = await stack.post(
        "notifications.channels.create",
        { tenant, kind, name: kind, url: r.url, events: ["human_queue"] },
        stack.keys.admin,
      );
      expect(res.status, JSON.stringify(res.json)).toBe(200);
    }
    const envelope = await stack.service.services.tenants.executor(tenant).call({
      runId: "r",
      stepId: "charge-1",
      tool: "charge_card",
      args: { order: "o-1", card: CARD },
      deadline: Deadline.after(10_000),
    });
    expect(envelope.status).toBe("UNKNOWN");
    const arrival = await eventually(() => hook.arrivals[0], 10_000, "the webhook");
    await eventually(() => slack.arrivals[0], 10_000, "the Slack message");
    const event = JSON.parse(arrival.body).events[0];
    expect(event.subject).toMatchObject({ tool: "charge_card", code: expect.any(String), message: MESSAGE_WITHHELD });
    for (const a of [...hook.arrivals, ...slack.arrivals]) expect(a.body).not.toContain(CARD.slice(4));
    // The notification's own records (their args are what the read API shows) hold no card either.
    const { rows } = await stack.service.services.store.pool.query<{ args: unknown }>(
      "SELECT args FROM intent_records WHERE tenant = $1 AND tool LIKE 'tristate.notify.%'",
      [tenant],
    );
    expect(rows.length).toBe(2);
    for (const r of rows) expect(JSON.stringify(r.args)).not.toContain(CARD.slice(4));
  });

  it("a Slack URL (a credential) is not in the notification record's error nor the delivery log", async () => {
    const tenant = "slack-url";
    await stack.post("keys.create", { name: "a", role: "agent", tenant }, stack.keys.admin);
    const secretPath = "/services/T0001/B0001/s3cr3tT0k3nXYZ";
    const url = slack.url.replace("/hook", secretPath);
    const created = await stack.post(
      "notifications.channels.create",
      { tenant, kind: "slack", name: "s", url },
      stack.keys.admin,
    );
    const channelId = created.json.result.data.channel.id as string;
    slack.answers.push(404);
    await stack.post("notifications.channels.test", { tenant, id: channelId }, stack.keys.admin);
    const logged = await eventually(
      async () => {
        const items = (await stack.get("notifications.deliveries.list", { tenant, channelId }, stack.keys.admin)).json
          .result.data.items;
        return items[0]?.lastError ? items[0] : undefined;
      },
      10_000,
      "the 404 logged",
    );
    expect(logged.lastError).not.toContain("s3cr3t");
    // The record and its timeline (what intents.get shows a viewer): the 404 is there, the path is not.
    const { rows } = await stack.service.services.store.pool.query<{ error: unknown; events: unknown }>(
      `SELECT r.error, (SELECT jsonb_agg(e.data) FROM intent_events e WHERE e.tenant = r.tenant AND e.key = r.key) AS events
       FROM intent_records r WHERE r.tenant = $1 AND r.tool = 'tristate.notify.slack'`,
      [tenant],
    );
    expect(rows).toHaveLength(1);
    const shown = JSON.stringify(rows[0]);
    expect(shown).toContain("HTTP 404");
    expect(shown).not.toContain("s3cr3t");
  });
});
