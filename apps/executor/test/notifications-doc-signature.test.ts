/**
 * The receiver's signature check printed in docs/notifications.md (issue 23 §3: "the signature check in
 * ten lines of code for a receiver") is run as printed: the code block is taken from the markdown,
 * loaded as a module, and checks a real delivery from a running service to a real HTTP receiver —
 * accepted — and rejects a tampered body, a wrong secret, an old timestamp and a missing `v1`.
 */
import { createHmac } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, type HttpReceiver, LOOPBACK_RECEIVERS, startHttpReceiver } from "./notifications-support.ts";
import { startStack, type TestStack } from "./support.ts";

type Verify = (secret: string, header: string, raw: string, toleranceS?: number) => boolean;

let stack: TestStack;
let hook: HttpReceiver;
let dir: string;
let verifyTristate: Verify;
let block: string;

beforeAll(async () => {
  const markdown = await readFile(new URL("../../../docs/notifications.md", import.meta.url), "utf8");
  const blocks = [...markdown.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const found = blocks.filter((b) => b.includes("function verifyTristate"));
  expect(found, "exactly one js block defines verifyTristate").toHaveLength(1);
  block = found[0]!;
  dir = await mkdtemp(join(tmpdir(), "tristate-doc-signature-"));
  const file = join(dir, "verify.mjs");
  await writeFile(file, `${block}\nexport { verifyTristate };\n`);
  verifyTristate = ((await import(pathToFileURL(file).href)) as { verifyTristate: Verify }).verifyTristate;
  hook = await startHttpReceiver();
  stack = await startStack({
    env: { TRISTATE_NOTIFY_ALLOW_HOSTS: LOOPBACK_RECEIVERS, TRISTATE_NOTIFY_INTERVAL_MS: "100" },
  });
});
afterAll(async () => {
  await stack?.close();
  await hook?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("docs/notifications.md's receiver check", () => {
  it("is at most ten lines of code (the function), as the issue asks", () => {
    const fn = block.slice(block.indexOf("function verifyTristate")).trim().split("\n");
    expect(fn.length).toBeLessThanOrEqual(10);
  });

  it("accepts a real delivery and rejects a tampered body, a wrong secret, an old timestamp, no v1", async () => {
    await stack.post("keys.create", { name: "doc agent", role: "agent", tenant: "doc" }, stack.keys.admin);
    const created = await stack.post(
      "notifications.channels.create",
      { tenant: "doc", kind: "webhook", name: "doc", url: hook.url },
      stack.keys.admin,
    );
    expect(created.status, JSON.stringify(created.json)).toBe(200);
    const { channel, secret } = created.json.result.data as { channel: { id: string }; secret: string };
    const sent = await stack.post("notifications.channels.test", { tenant: "doc", id: channel.id }, stack.keys.admin);
    const { deliveryId } = sent.json.result.data as { deliveryId: string };
    const arrival = await eventually(
      () => hook.arrivals.find((a) => a.headers["idempotency-key"] === deliveryId),
      10_000,
      "the test delivery",
    );
    const header = arrival.headers["tristate-signature"] as string;
    expect(verifyTristate(secret, header, arrival.body)).toBe(true);

    const tampered = arrival.body.replace('"type":"test"', '"type":"human_queue"');
    expect(tampered).not.toBe(arrival.body);
    expect(verifyTristate(secret, header, tampered)).toBe(false);
    expect(verifyTristate(`${secret}x`, header, arrival.body)).toBe(false);
    expect(verifyTristate("whsec_someone_elses", header, arrival.body)).toBe(false);
    // A correctly signed body, but 10 minutes old: a replay, refused by the default 300 s tolerance.
    const old = Math.floor(Date.now() / 1000) - 600;
    const oldHeader = `t=${old},v1=${createHmac("sha256", secret).update(`${old}.${arrival.body}`).digest("hex")}`;
    expect(verifyTristate(secret, oldHeader, arrival.body)).toBe(false);
    expect(verifyTristate(secret, oldHeader, arrival.body, 900)).toBe(true);
    expect(verifyTristate(secret, header.replace(/,v1=.*/, ""), arrival.body)).toBe(false);
    expect(verifyTristate(secret, "", arrival.body)).toBe(false);
  });
});
