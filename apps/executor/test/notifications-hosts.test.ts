/**
 * Where notification channels may point (`TRISTATE_NOTIFY_ALLOW_HOSTS`, issue 23 §3 walkthrough: a
 * channel URL could name cloud metadata or any private address and Tristate POSTed there). By default
 * (`*`) create refuses a non-public IP and a name resolving to one, naming `url`; a channel whose host
 * turns out inside at send time is not sent (nothing reaches the receiver) and the delivery log says
 * why; a name checked public that re-resolves to loopback when connecting (DNS rebinding) is refused
 * in the connection's own lookup. Real PostgreSQL, real loopback HTTP receivers.
 */
import { classifyError, Deadline } from "@tristate/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Resolve } from "../src/catalog/http-tool/host-policy.ts";
import { readEnv } from "../src/env.ts";
import { notifyHostPolicy, refusedChannelUrl } from "../src/notifications/allowed-hosts.ts";
import { NOTIFY_TOOLS } from "../src/notifications/internal-names.ts";
import { notifyTools } from "../src/notifications/tools.ts";
import { eventually, type HttpReceiver, startHttpReceiver } from "./notifications-support.ts";
import { startStack, type TestStack } from "./support.ts";

let stack: TestStack;
let receiver: HttpReceiver;

beforeAll(async () => {
  receiver = await startHttpReceiver();
  // The default setting: no TRISTATE_NOTIFY_ALLOW_HOSTS.
  stack = await startStack({ env: { TRISTATE_NOTIFY_INTERVAL_MS: "100" } });
});
afterAll(async () => {
  await stack?.close();
  await receiver?.close();
});

describe("TRISTATE_NOTIFY_ALLOW_HOSTS by default (*: public addresses only)", () => {
  it("create refuses metadata, private, loopback addresses and a name resolving to loopback, naming url", async () => {
    const cases: [url: string, rule: string][] = [
      ["http://169.254.169.254/latest/meta-data/", 'host "169.254.169.254" is a link-local address'],
      ["http://10.1.2.3:8080/hook", 'host "10.1.2.3" is a private address'],
      [receiver.url, 'host "127.0.0.1" is a loopback address'],
      [`http://localhost:${receiver.port}/hook`, 'host "localhost" resolves to'],
      ["http://[::1]/hook", 'host "::1" is a loopback address'],
    ];
    for (const kind of ["webhook", "slack"] as const) {
      for (const [url, rule] of cases) {
        const res = await stack.post("notifications.channels.create", { kind, name: "in", url }, stack.keys.admin);
        expect(res.status, url).toBe(400);
        expect(res.json.error.data.field).toBe("url");
        expect(res.json.error.message).toContain(`url: ${rule}`);
        expect(res.json.error.message).toContain(
          "TRISTATE_NOTIFY_ALLOW_HOSTS allows non-public addresses only for a host it lists exactly",
        );
      }
    }
    const listed = await stack.get("notifications.channels.list", {}, stack.keys.admin);
    expect(listed.json.result.data.channels).toStrictEqual([]);
    expect(receiver.arrivals).toStrictEqual([]);
  });

  it("a stored channel whose host is inside is not sent at send time; the delivery log says why", async () => {
    // Written past the create check (as a channel made under a wider setting would be).
    const notifications = stack.service.services.db.notifications("default");
    const { channel } = await notifications.createChannel({ kind: "webhook", name: "old", url: receiver.url });
    const test = await stack.post("notifications.channels.test", { id: channel.id }, stack.keys.admin);
    expect(test.status).toBe(200);
    const logged = await eventually(
      async () => {
        const items = (await stack.get("notifications.deliveries.list", { channelId: channel.id }, stack.keys.admin))
          .json.result.data.items;
        return items[0]?.lastError ? items[0] : undefined;
      },
      10_000,
      "the refusal logged",
    );
    expect(logged.lastError).toContain('host "127.0.0.1" is a loopback address');
    expect(logged.lastError).toContain("TRISTATE_NOTIFY_ALLOW_HOSTS");
    expect(receiver.arrivals).toStrictEqual([]);
    await notifications.deleteChannel(channel.id);
  });
});

describe("the setting's entries", () => {
  it("listed exactly, loopback hosts may be channels; an unresolvable name is left to the send", async () => {
    const policy = notifyHostPolicy(["127.0.0.1", "localhost"]);
    expect(await refusedChannelUrl(policy, receiver.url)).toBeNull();
    expect(await refusedChannelUrl(policy, `http://localhost:${receiver.port}/`)).toBeNull();
    expect(await refusedChannelUrl(policy, "http://10.0.0.1/")).toBe(
      'url: host "10.0.0.1" is not in TRISTATE_NOTIFY_ALLOW_HOSTS',
    );
    const nowhere: Resolve = async () => {
      throw Object.assign(new Error("nope"), { code: "ENOTFOUND" });
    };
    expect(await refusedChannelUrl(notifyHostPolicy(["*"], nowhere), "https://hooks.example.test/x")).toBeNull();
  });

  it("a bad entry is refused at start naming the setting", async () => {
    expect(() =>
      readEnv({ DATABASE_URL: "postgres://x@localhost/x", TRISTATE_NOTIFY_ALLOW_HOSTS: "127.0.0.1,http://x/" }),
    ).toThrow("TRISTATE_NOTIFY_ALLOW_HOSTS.1");
  });

  it("DNS rebinding: a wildcard-allowed name public at the check and loopback at connect is not sent", async () => {
    let lookups = 0;
    const rebinding: Resolve = async () => [{ address: lookups++ === 0 ? "93.184.216.34" : "127.0.0.1" }];
    const url = `http://hooks.partner.example:${receiver.port}/hook`;
    const tools = notifyTools({
      tenant: "default",
      targets: { channelTarget: async () => ({ url, secret: "whsec_test" }) as never },
      smtpUrl: undefined,
      smtpFrom: "t <t@localhost>",
      hosts: notifyHostPolicy(["*.partner.example"], rebinding),
    });
    for (const name of [NOTIFY_TOOLS.webhook, NOTIFY_TOOLS.slack]) {
      const tool = tools.find((t) => t.name === name)!;
      const args =
        name === NOTIFY_TOOLS.webhook
          ? { channel_id: "nch_1", delivery_id: "d1", body: "{}" }
          : { channel_id: "nch_1", delivery_id: "d1", text: "hi", blocks: [] };
      lookups = 0;
      const error = await tool
        .invoke(args as never, {
          idempotencyKey: "k",
          signal: AbortSignal.timeout(2000),
          timeoutMs: 2000,
          deadline: Deadline.after(2000),
          attempt: 1,
        })
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(lookups, name).toBe(2);
      expect(classifyError(error)).toMatchObject({ outcome: "FAILED_NO_EFFECT", code: "INVALID_ARGUMENTS" });
      expect(String(classifyError(error).message)).toContain(
        "resolves to 127.0.0.1, a loopback address, at connect time",
      );
    }
    expect(receiver.arrivals).toStrictEqual([]);
  });
});
