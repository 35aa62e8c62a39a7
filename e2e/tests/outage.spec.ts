import { executorReachable, expect, login, Seeder, screenshot, stack, test } from "../src/fixtures.ts";

/** The per-tab store of the last answers (apps/web/src/trpc/persist.ts). */
const LAST_DATA = "tristate.lastData.v1";

test.afterEach(async () => {
  await executorReachable(true);
});

test("executor unreachable: every page renders with a banner and the last data, then recovers by itself", async ({
  page,
}, testInfo) => {
  const { tools } = stack();
  const rec = await new Seeder("outage").call(tools.pages, "succeeded");
  await login(page, "operator", `/intents/${rec.key}`);
  await expect(page.getByTestId("idempotency-key")).toContainText(rec.key);
  await expect.poll(() => page.evaluate((k) => sessionStorage.getItem(k) !== null, LAST_DATA)).toBe(true);

  await executorReachable(false);
  const reload = await page.reload();
  expect(reload?.status(), "no HTTP 500 while the executor is down").toBeLessThan(500);
  const banner = page.getByTestId("outage-banner");
  await expect(banner).toContainText(/Executor unreachable since .+, retrying/);
  // The last data this tab had is still on screen, and the signed-in name is the last confirmed one.
  await expect(page.getByTestId("idempotency-key")).toContainText(rec.key);
  await expect(page.getByRole("heading", { name: tools.pages })).toBeVisible();
  await expect(page.locator("body")).not.toContainText("Minified React error");
  await screenshot(page, "outage-banner", testInfo, true);

  for (const path of ["/overview", "/queue", "/stale", "/runs", "/audit", "/intents"]) {
    const res = await page.goto(path);
    expect(res?.status(), `${path} while the executor is down`).toBeLessThan(500);
    await expect(page.getByTestId("outage-banner"), path).toBeVisible();
    await expect(page.getByRole("navigation", { name: "Main" })).toBeVisible();
  }

  await page.goto(`/intents/${rec.key}`);
  await expect(banner).toBeVisible();
  await executorReachable(true);
  await expect(banner).toBeHidden({ timeout: 20_000 });
  await expect(page.getByTestId("idempotency-key")).toContainText(rec.key);
  await expect(page.getByTestId("status")).toContainText(/succeeded/i);
});

test("signing in while the executor is down says so, with and without JavaScript", async ({ browser }) => {
  await executorReachable(false);
  for (const javaScriptEnabled of [true, false]) {
    const context = await browser.newContext({ baseURL: stack().webUrl, javaScriptEnabled });
    const page = await context.newPage();
    await page.goto("/login");
    if (javaScriptEnabled) await page.waitForLoadState("networkidle");
    await page.getByLabel("API key").fill(stack().keys.operator);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.locator("form [role=alert]")).toContainText("The executor could not be reached");
    await expect(page).toHaveURL(/\/login/);
    await context.close();
  }
});

test("executor hanging (answers nothing): the record page gives up in time, keeps this tab's last data, and the header reads as part of the outage", async ({
  page,
}) => {
  test.setTimeout(90_000);
  const { tools } = stack();
  const rec = await new Seeder("outage-hang").call(tools.pages, "succeeded");
  // Signed in with the admin key (the header's tenant picker is an admin's).
  await page.goto(`/login?next=${encodeURIComponent(`/intents/${rec.key}`)}`);
  await page.waitForLoadState("networkidle");
  await page.getByLabel("API key").fill(stack().keys.admin);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).not.toHaveURL(/\/login(\?|$)/);
  await expect(page.getByTestId("idempotency-key")).toContainText(rec.key);
  await expect(page.getByLabel("Tenant", { exact: true })).toBeVisible();
  await expect.poll(() => page.evaluate((k) => sessionStorage.getItem(k) !== null, LAST_DATA)).toBe(true);

  // From the browser's side a hanging executor is a request that never gets an answer; the dashboard
  // server's own health view says it is down (its calls time out).
  const downSince = Date.now();
  await page.route("**/api/trpc/**", () => undefined);
  await page.route("**/api/health", (route) => route.fulfill({ json: { up: false, downSinceEpochMs: downSince } }));

  // A record this tab never read: "Loading the record…" gives way to the outage within ≈10 s, not 30+.
  const unseen = "0123456789abcdef0123456789abcdef";
  await page.goto(`/intents/${unseen}`);
  const banner = page.getByTestId("outage-banner");
  await expect(banner).toBeVisible({ timeout: 15_000 });
  await expect(page.getByText("Loading the record…")).toBeHidden({ timeout: 15_000 });
  await expect(page.getByTestId("updated-ago")).not.toContainText("Live");
  await expect(page.getByText("Could not load the tenants.")).toHaveCount(0);

  // The record it read: its last data stays on screen.
  await page.goto(`/intents/${rec.key}`);
  await expect(page.getByTestId("idempotency-key")).toContainText(rec.key);
  await expect(banner).toBeVisible({ timeout: 15_000 });
  await expect(page.getByTestId("idempotency-key")).toContainText(rec.key);
  await expect(page.getByTestId("updated-ago")).not.toContainText("Live");
});
