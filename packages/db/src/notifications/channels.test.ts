import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OpenDatabase } from "../open-database.ts";
import { CHANNEL_DELETED_ERROR } from "./tenant-notifications.ts";
import { openTestFacade } from "./test-support.ts";

/** TenantNotifications on a real database: validation, secrets, isolation, the delivery log. */
describe("notification channels (real PostgreSQL)", () => {
  let facade: Awaited<ReturnType<typeof openTestFacade>>;
  let db: OpenDatabase;
  beforeAll(async () => {
    facade = await openTestFacade();
    db = facade.db;
  });
  afterAll(async () => {
    await facade?.close();
  });

  it("creates a webhook with a whsec_ secret shown once; lists show only its prefix", async () => {
    const n = db.notifications("acme");
    const { channel, secret } = await n.createChannel({
      kind: "webhook",
      name: " Ops hook ",
      url: "https://hooks.example/t",
    });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(channel).toMatchObject({
      tenant: "acme",
      kind: "webhook",
      name: "Ops hook",
      url: "https://hooks.example/t",
      to: null,
      enabled: true,
      secretPrefix: secret!.slice(0, 10),
      events: ["human_queue", "compensation_failed", "evidence_contradicts", "unknown_share", "stale_pending"],
    });
    expect(channel.id).toMatch(/^nch_[0-9a-f]{24}$/);
    const listed = await n.listChannels();
    expect(listed).toEqual([channel]);
    expect(JSON.stringify(listed)).not.toContain(secret!.slice(10));
    const email = await n.createChannel({
      kind: "email",
      name: "Ops",
      to: ["ops@example.com"],
      events: ["human_queue"],
    });
    expect(email.secret).toBeNull();
    expect(email.channel).toMatchObject({
      url: null,
      to: ["ops@example.com"],
      secretPrefix: null,
      events: ["human_queue"],
    });
    const slack = await n.createChannel({ kind: "slack", name: "S", url: "http://127.0.0.1:9/slack" });
    expect(slack.secret).toBeNull();
  });

  it("refuses bad input naming the field and the rule", async () => {
    const n = db.notifications("acme");
    const cases: [unknown, RegExp][] = [
      [{ kind: "pager", name: "x", url: "https://a.example" }, /^kind: must be one of webhook, slack, email/],
      [{ kind: "webhook", name: "", url: "https://a.example" }, /^name: must not be empty/],
      [{ kind: "webhook", name: "x".repeat(101), url: "https://a.example" }, /^name: must be at most 100 characters/],
      [{ kind: "webhook", name: "x", url: "ftp://a.example" }, /^url: must be an absolute http\(s\) URL/],
      [{ kind: "slack", name: "x", url: "hooks.slack.com/x" }, /^url: must be an absolute http\(s\) URL/],
      [{ kind: "webhook", name: "x" }, /^url: is required for a webhook channel/],
      [{ kind: "webhook", name: "x", url: "https://a.example", to: ["a@b.co"] }, /^to: is not taken by a webhook/],
      [{ kind: "email", name: "x" }, /^to: is required for an email channel/],
      [{ kind: "email", name: "x", to: [] }, /^to: must list at least one address/],
      [
        { kind: "email", name: "x", to: Array.from({ length: 21 }, (_, i) => `a${i}@b.co`) },
        /^to: must list at most 20/,
      ],
      [{ kind: "email", name: "x", to: ["not an address"] }, /^to\.0: must each be an e-mail address/],
      [
        { kind: "email", name: "x", to: ["a@b.co"], url: "https://a.example" },
        /^url: is not taken by an email channel/,
      ],
      [{ kind: "email", name: "x", to: ["a@b.co"], events: ["test"] }, /^events\.0: must each be one of human_queue/],
      [{ kind: "email", name: "x", to: ["a@b.co"], events: [] }, /^events: must list at least one event kind/],
      [{ kind: "email", name: "x", to: ["a@b.co"], events: ["human_queue", "human_queue"] }, /^events: must not list/],
    ];
    for (const [input, rule] of cases) {
      await expect(n.createChannel(input as never), JSON.stringify(input)).rejects.toThrow(rule);
      await expect(n.createChannel(input as never)).rejects.toBeInstanceOf(TypeError);
    }
    const { channel } = await n.createChannel({
      kind: "slack",
      name: "ok",
      url: "https://hooks.slack.com/services/T/B/x",
    });
    await expect(n.updateChannel(channel.id, { name: "" })).rejects.toThrow(/^name: must not be empty/);
    await expect(n.updateChannel(channel.id, { events: ["nope" as never] })).rejects.toThrow(/^events\.0: /);
    await expect(n.updateChannel(channel.id, { enabled: "yes" as never })).rejects.toThrow(
      /^enabled: must be a boolean/,
    );
  });

  it("another tenant's channel reads as absent everywhere", async () => {
    const mine = db.notifications("t-mine");
    const theirs = db.notifications("t-theirs");
    const { channel } = await mine.createChannel({ kind: "webhook", name: "mine", url: "https://a.example/h" });
    expect(await theirs.getChannel(channel.id)).toBeNull();
    expect(await theirs.listChannels()).toEqual([]);
    expect(await theirs.updateChannel(channel.id, { name: "stolen" })).toBeNull();
    expect(await theirs.sendTest(channel.id)).toBeNull();
    expect(await theirs.deleteChannel(channel.id)).toBe(false);
    expect(await theirs.hasChannelFor("human_queue")).toBe(false);
    expect((await theirs.listDeliveries({ channelId: channel.id })).items).toEqual([]);
    await mine.sendTest(channel.id);
    expect((await theirs.listDeliveries()).items).toEqual([]);
    expect(await mine.getChannel(channel.id)).toMatchObject({ name: "mine" });
    expect(() => db.notifications("Bad Tenant!")).toThrow(TypeError);
  });

  it("hasChannelFor follows enabled channels and their events", async () => {
    const n = db.notifications("t-has");
    expect(await n.hasChannelFor("human_queue")).toBe(false);
    const { channel } = await n.createChannel({
      kind: "email",
      name: "x",
      to: ["a@b.co"],
      events: ["compensation_failed"],
    });
    expect(await n.hasChannelFor("human_queue")).toBe(false);
    expect(await n.hasChannelFor("compensation_failed")).toBe(true);
    await n.updateChannel(channel.id, { events: ["human_queue"] });
    expect(await n.hasChannelFor("human_queue")).toBe(true);
    expect(await n.updateChannel(channel.id, { enabled: false })).toMatchObject({
      enabled: false,
      events: ["human_queue"],
    });
    expect(await n.hasChannelFor("human_queue")).toBe(false);
    expect(await n.hasChannelFor("bogus" as never)).toBe(false);
  });

  it("sendTest makes one test event and one delivery for that channel; the log pages newest first", async () => {
    const n = db.notifications("t-log");
    const a = (await n.createChannel({ kind: "webhook", name: "a", url: "https://a.example/h" })).channel;
    const b = (await n.createChannel({ kind: "webhook", name: "b", url: "https://b.example/h" })).channel;
    const sent = [];
    for (let i = 0; i < 5; i++) sent.push(await n.sendTest(i % 2 === 0 ? a.id : b.id));
    expect(sent[0]!.event).toMatchObject({
      kind: "test",
      tenant: "t-log",
      subject: { channelId: a.id, channelName: "a" },
    });
    expect(sent[0]!.deliveryId).toMatch(/^ndl_[0-9a-f]{24}$/);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await n.listDeliveries({ limit: 2, ...(cursor ? { cursor } : {}) });
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((d) => d.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(sent.map((s) => s!.deliveryId).reverse());
    const onlyA = await n.listDeliveries({ channelId: a.id });
    expect(onlyA.items.map((d) => d.id)).toEqual([sent[4]!.deliveryId, sent[2]!.deliveryId, sent[0]!.deliveryId]);
    expect(onlyA.items[0]).toMatchObject({
      kind: "test",
      status: "pending",
      attempts: 0,
      eventIds: [sent[4]!.event.id],
    });
    expect((await n.listDeliveries({ status: "delivered" })).items).toEqual([]);
    const first = await n.listDeliveries({ limit: 1 });
    await expect(db.notifications("t-other").listDeliveries({ cursor: first.nextCursor! })).rejects.toThrow(RangeError);
    await expect(n.listDeliveries({ cursor: "garbage" })).rejects.toThrow(/^cursor: /);
    await expect(n.listDeliveries({ limit: 0 })).rejects.toThrow(/^limit: /);
    await expect(n.listDeliveries({ limit: 201 })).rejects.toThrow(/^limit: /);
  });

  it("deleting a channel closes its pending deliveries as failed and keeps the log", async () => {
    const n = db.notifications("t-del");
    const { channel } = await n.createChannel({ kind: "slack", name: "s", url: "https://hooks.slack.com/services/x" });
    const test = await n.sendTest(channel.id);
    expect(await n.deleteChannel(channel.id)).toBe(true);
    expect(await n.deleteChannel(channel.id)).toBe(false);
    expect(await n.getChannel(channel.id)).toBeNull();
    const log = await n.listDeliveries();
    expect(log.items).toEqual([
      expect.objectContaining({
        id: test!.deliveryId,
        status: "failed",
        lastError: CHANNEL_DELETED_ERROR,
        nextAttemptAtEpochMs: null,
      }),
    ]);
  });
});
