/**
 * The Notifications page (issue 23 §3), in Chromium against the real stack: an admin creates a signed
 * webhook channel pointing at a receiver this test starts (node:http), sees its secret once, sends a
 * test, and sees the delivery logged as delivered; the receiver got it with a valid
 * `Tristate-Signature` (HMAC-SHA256 of "<t>.<body>" checked here) and the delivery id as its
 * `Idempotency-Key`. A refusal is shown beside the field it names; Disable and Delete (asked first)
 * work from the keyboard; the page and header fit at 1280 px, a target host is never broken; a channel
 * whose receiver is down shows its delivery retrying with the last error, and once the channel is
 * deleted, given up with that as its reason. A viewer has no Notifications tab, and
 * the page shows it no action.
 */
import { createHmac, randomUUID, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "@playwright/test";
import { api, expect, expectNoSeriousA11yViolations, login, screenshot, stack, test } from "../src/fixtures.ts";

/** One request the receiver got. */
interface Received {
  method: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on loopback that answers 200 and keeps what it got. */
async function startReceiver(): Promise<{ url: string; received: Received[]; close: () => Promise<void> }> {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ method: req.method ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/tristate-hook`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Whether `header` (`t=<epoch s>,v1=<hex>`) signs `body` with `secret`, as a receiver checks it:
 * HMAC-SHA256 of "<t>.<body>", compared in constant time.
 */
function validSignature(header: string, body: string, secret: string): boolean {
  const parts = Object.fromEntries(header.split(",").map((p) => p.split("=", 2) as [string, string]));
  const t = parts.t;
  const v1 = parts.v1;
  if (!t || !v1 || !/^\d+$/.test(t) || !/^[0-9a-f]{64}$/.test(v1)) return false;
  const expected = createHmac("sha256", secret).update(`${t}.${body}`).digest();
  return timingSafeEqual(expected, Buffer.from(v1, "hex"));
}

/** A loopback port nothing listens on (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Deletes the admin tenant's channels this test made, so later tests' records notify no one. */
async function deleteChannelsNamed(pattern: RegExp): Promise<void> {
  const { json } = await api.get("notifications.channels.list", undefined, stack().keys.admin);
  for (const channel of (json?.result?.data?.channels ?? []) as { id: string; name: string }[]) {
    if (pattern.test(channel.name)) {
      await api.post("notifications.channels.delete", { id: channel.id }, stack().keys.admin);
    }
  }
}

/** Signs in with the admin key (the fixtures' `login` covers the other roles). */
async function loginAsAdmin(page: Page, next: string): Promise<void> {
  await page.goto(`/login?next=${encodeURIComponent(next)}`);
  await page.waitForLoadState("networkidle");
  await page.getByLabel("API key").fill(stack().keys.admin);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).not.toHaveURL(/\/login(\?|$)/);
}

test("an admin creates a webhook channel, sees its secret once, sends a test: delivered, signed, logged", async ({
  page,
}, testInfo) => {
  const receiver = await startReceiver();
  try {
    await page.setViewportSize({ width: 1280, height: 800 });
    await loginAsAdmin(page, "/overview");
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Notifications" }).click();
    await expect(page).toHaveURL(/\/notifications/);
    await expect(page.getByRole("heading", { name: "Notifications", level: 1 })).toBeVisible();
    const tenant = ((await page.getByTestId("notifications-tenant").textContent()) ?? "").trim();
    expect(tenant).not.toBe("");

    // A refusal is shown beside the field it names (an e-mail channel with a bad address: `to`).
    const form = page.getByRole("form", { name: "New channel" });
    await form.getByLabel("Kind").selectOption("email");
    await form.getByLabel("Name", { exact: true }).fill("bad mail");
    await form.getByLabel("Recipients").fill("not-an-address");
    await form.getByRole("button", { name: "Create channel" }).click();
    const recipients = form.getByLabel("Recipients");
    await expect(recipients).toHaveAttribute("aria-invalid", "true");
    const describedBy = (await recipients.getAttribute("aria-describedby")) ?? "";
    await expect(page.locator(`[id="${describedBy}"]`)).toContainText(/to/);
    await expect(page.getByRole("table", { name: "Notification channels" })).toHaveCount(0);

    // A webhook, created from the keyboard (Enter in the form).
    const name = `e2e hook ${randomUUID().slice(0, 6)}`;
    await form.getByLabel("Kind").selectOption("webhook");
    await form.getByLabel("Name", { exact: true }).fill(name);
    await form.getByLabel("URL").fill(receiver.url);
    await expect(form.getByRole("checkbox")).toHaveCount(5);
    for (const box of await form.getByRole("checkbox").all()) await expect(box).toBeChecked();
    await form.getByLabel("URL").press("Enter");

    // The secret, once, with a copy button and the sentence that it will not be shown again.
    const once = page.getByRole("region", { name: "Signing secret" });
    await expect(once).toBeVisible();
    await expect(once).toContainText("This secret will not be shown again.");
    await expect(once.getByRole("button", { name: "Copy" })).toBeVisible();
    const secret = await once.getByTestId("channel-secret").inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{16,}$/);

    const row = page.getByTestId("channel-row").filter({ hasText: name });
    await expect(row).toBeVisible();
    await expect(row).toContainText(new URL(receiver.url).host);
    await expect(row).toContainText("human_queue");
    await expect(row.getByTestId("channel-enabled")).toHaveText("Yes");
    const channelId = (await row.getAttribute("data-channel-id")) ?? "";
    expect(channelId).toMatch(/^nch_/);
    await expectNoSeriousA11yViolations(page, "notifications-secret", testInfo);

    // Done: the secret is gone, and neither the page nor the API shows it again.
    await once.getByRole("button", { name: "Done" }).click();
    await expect(once).toHaveCount(0);
    await page.reload();
    await expect(page.getByTestId("channel-row").filter({ hasText: name })).toBeVisible();
    expect(await page.content()).not.toContain(secret);
    const listed = await api.get("notifications.channels.list", { tenant }, stack().keys.admin);
    expect(listed.status, JSON.stringify(listed.json)).toBe(200);
    expect(JSON.stringify(listed.json)).not.toContain(secret);

    // Send test → delivered in the log, and the receiver got it, signed.
    await page.getByTestId("channel-row").filter({ hasText: name }).getByRole("button", { name: "Send test" }).click();
    const outcome = page.getByTestId("channel-outcome");
    await expect(outcome).toContainText("Test queued");
    const deliveryId = /ndl_[A-Za-z0-9_-]+/.exec((await outcome.textContent()) ?? "")?.[0] ?? "";
    expect(deliveryId).not.toBe("");
    const logRow = page.locator(`[data-testid="delivery-row"][data-delivery-id="${deliveryId}"]`);
    await expect(logRow).toHaveAttribute("data-status", "delivered", { timeout: 45_000 });
    await expect(logRow.getByTestId("delivery-kind")).toHaveText("test");
    await expect(logRow.getByTestId("delivery-events")).toHaveText("1");
    await expect(page.getByTestId("channel-row").filter({ hasText: name }).getByTestId("delivery-status")).toHaveText(
      /delivered/,
      { timeout: 20_000 },
    );

    const hits = receiver.received.filter((r) => r.headers["idempotency-key"] === deliveryId);
    expect(hits.length, `receiver got ${JSON.stringify(receiver.received.map((r) => r.headers))}`).toBeGreaterThan(0);
    const hit = hits[0] as Received;
    expect(hit.method).toBe("POST");
    const signature = String(hit.headers["tristate-signature"] ?? "");
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(validSignature(signature, hit.body, secret), "signature verifies with the secret shown once").toBe(true);
    expect(validSignature(signature, hit.body, `${secret}x`), "and not with another secret").toBe(false);
    expect(validSignature(signature, `${hit.body} `, secret), "nor for another body").toBe(false);
    const signedAt = Number(/t=(\d+)/.exec(signature)?.[1]);
    expect(Math.abs(signedAt - Date.now() / 1000)).toBeLessThan(300);
    expect(() => JSON.parse(hit.body)).not.toThrow();

    // The page fits at 1280 px (no sideways scroll) and the header stays one row with the extra tab.
    const fit = await page.evaluate(() => ({
      page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
      tables: Array.from(document.querySelectorAll(".table-wrap"), (w) => w.scrollWidth - w.clientWidth),
    }));
    expect(fit.page).toBeLessThanOrEqual(0);
    for (const overflow of fit.tables) expect(overflow).toBeLessThanOrEqual(0);
    // The Target column keeps a host whole ("127.0.0.1:<port>" on one line, never "127.0.0.1:" / "<port>").
    const target = page.getByTestId("channel-row").filter({ hasText: name }).getByTestId("target-part");
    await expect(target).toHaveText(/^127\.0\.0\.1:\d+$/);
    const lines = await target.evaluate((el) => {
      const range = document.createRange();
      range.selectNodeContents(el);
      return new Set(Array.from(range.getClientRects(), (r) => Math.round(r.top))).size;
    });
    expect(lines, "the target host is on one line").toBe(1);
    const header = await page.locator("header.topbar").evaluate((el) => {
      const boxes = Array.from(el.children, (c) => c.getBoundingClientRect());
      const signOut = Array.from(el.querySelectorAll("button"), (b) => b.getBoundingClientRect()).at(-1);
      return {
        oneRow: Math.max(...boxes.map((b) => b.top)) < Math.min(...boxes.map((b) => b.bottom)),
        signOutRight: signOut ? signOut.right : Number.POSITIVE_INFINITY,
      };
    });
    expect(header.oneRow, "header is one row at 1280 px").toBe(true);
    // (pages.spec.ts checks every page with a key named as long as the first-start admin key's.)
    expect(header.signOutRight, "Sign out is on screen at 1280 px").toBeLessThanOrEqual(1280);
    await expect(page.locator("header.topbar").getByRole("button", { name: "Sign out" })).toBeInViewport({ ratio: 1 });
    await expectNoSeriousA11yViolations(page, "notifications", testInfo);
    await screenshot(page, "notifications", testInfo, true);

    // The log of this channel alone, through its link (the filter lives in the URL).
    await page
      .getByTestId("channel-row")
      .filter({ hasText: name })
      .getByRole("link", { name: `Delivery log of ${name}` })
      .click();
    await expect(page).toHaveURL(new RegExp(`channel=${channelId}`));
    await expect(page.getByRole("heading", { name: `Delivery log of “${name}”` })).toBeVisible();
    await expect(logRow).toBeVisible();

    // Disable, from the keyboard.
    const disable = page.getByTestId("channel-row").filter({ hasText: name }).getByRole("button", { name: "Disable" });
    await disable.focus();
    await page.keyboard.press("Enter");
    await expect(page.getByTestId("channel-row").filter({ hasText: name })).toHaveAttribute("data-enabled", "false");
    await expect(
      page.getByTestId("channel-row").filter({ hasText: name }).getByRole("button", { name: "Enable" }),
    ).toBeVisible();

    // Delete asks first: Escape keeps the channel, confirming deletes it; its delivery stays in the log.
    const remove = page.getByTestId("channel-row").filter({ hasText: name }).getByRole("button", { name: "Delete" });
    await remove.click();
    const dialog = page.getByRole("dialog");
    await expect(dialog).toContainText(`Delete channel “${name}”?`);
    await page.keyboard.press("Escape");
    await expect(dialog).toBeHidden();
    await expect(page.getByTestId("channel-row").filter({ hasText: name })).toBeVisible();
    await remove.click();
    await dialog.getByRole("button", { name: "Delete channel" }).click();
    await expect(dialog).toBeHidden();
    await expect(page.getByTestId("channel-row").filter({ hasText: name })).toHaveCount(0);
    await expect(logRow).toHaveAttribute("data-status", "delivered");

    // A receiver that is down: the delivery stays pending, retrying, its last error in view (amber ↻).
    const dead = `e2e dead hook ${randomUUID().slice(0, 6)}`;
    await page.goto("/notifications");
    await form.getByLabel("Name", { exact: true }).fill(dead);
    await form.getByLabel("URL").fill(`http://127.0.0.1:${await closedPort()}/down`);
    await form.getByRole("button", { name: "Create channel" }).click();
    await page.getByRole("region", { name: "Signing secret" }).getByRole("button", { name: "Done" }).click();
    await page.getByTestId("channel-row").filter({ hasText: dead }).getByRole("button", { name: "Send test" }).click();
    await expect(outcome).toContainText(`Test queued for “${dead}”`);
    const deadId = /ndl_[A-Za-z0-9_-]+/.exec((await outcome.textContent()) ?? "")?.[0] ?? "";
    const deadRow = page.locator(`[data-testid="delivery-row"][data-delivery-id="${deadId}"]`);
    await expect(deadRow.getByTestId("delivery-attempts")).not.toHaveText("0", { timeout: 30_000 });
    await expect(deadRow).not.toHaveAttribute("data-status", "delivered");
    await expect(deadRow.getByTestId("delivery-status")).toHaveAttribute("title", /retrying|Failed/);
    await expect(deadRow).toContainText(/error/i);

    // Deleting its channel gives the delivery up: its row and the log's line say why in the delivery's
    // own words (the channel was deleted), not that a receiver never acknowledged it.
    await deleteChannelsNamed(new RegExp(`^${dead}$`));
    await expect(deadRow).toHaveAttribute("data-status", "failed", { timeout: 30_000 });
    await expect(deadRow).toContainText("gave up; last error: the channel was deleted before delivery");
    const failedLine = page.getByTestId("failed-count");
    await expect(failedLine).toContainText("gave up, no more attempts");
    await expect(failedLine).toContainText("“the channel was deleted before delivery”");
    await expect(failedLine).not.toContainText(/receiver|acknowledg/);
    await screenshot(page, "notifications-failed-deleted", testInfo);
  } finally {
    await receiver.close();
    await deleteChannelsNamed(/^e2e /);
  }
});

test("a viewer has no Notifications tab, and the page shows it no action", async ({ page }) => {
  await login(page, "viewer", "/overview");
  await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Overview" })).toBeVisible();
  await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Notifications" })).toHaveCount(
    0,
  );
  await page.goto("/notifications");
  await expect(page.getByRole("heading", { name: "Notifications", level: 1 })).toBeVisible();
  await expect(page.getByText("Only admins configure notifications.")).toBeVisible();
  for (const action of ["Create channel", "Send test", "Disable", "Delete", "Copy"]) {
    await expect(page.getByRole("button", { name: action })).toHaveCount(0);
  }
  await expect(page.getByRole("form", { name: "New channel" })).toHaveCount(0);
  // And the API refuses it too (admin keys only).
  const listed = await api.get("notifications.channels.list", undefined, stack().keys.viewer);
  expect(listed.status).toBe(403);
});
