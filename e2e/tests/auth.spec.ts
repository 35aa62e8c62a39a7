import { randomUUID } from "node:crypto";
import { ACTIONS, api, expect, login, queueRow, Seeder, stack, test } from "../src/fixtures.ts";

test("logged-out users are sent to the login page, which keeps where they were going", async ({ page }) => {
  for (const path of ["/overview", "/queue", `/intents/${"ab".repeat(16)}`, "/stale", "/runs", "/audit"]) {
    await page.goto(path);
    await expect(page, `visiting ${path} logged out`).toHaveURL(/\/login\?/);
    expect(new URL(page.url()).searchParams.get("next")).toBe(path);
  }
  await page.goto("/");
  await expect(page).toHaveURL(/\/login(\?|$)/);
  // The data proxy refuses a request without a session.
  const res = await page.request.get("/api/trpc/queue.list");
  expect([401, 403]).toContain(res.status());

  // A wrong key: an alert, still on the login page.
  await page.goto("/login");
  await page.waitForLoadState("networkidle");
  await page.getByLabel("API key").fill(`ts_viewer_${randomUUID()}`);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page.getByRole("alert").filter({ hasText: "invalid or revoked" })).toBeVisible();
  await expect(page).toHaveURL(/\/login/);

  // Signing in lands on `next`; the key stays out of the page's reach (httpOnly, SameSite=Strict cookie).
  await login(page, "viewer", "/audit");
  await expect(page).toHaveURL(/\/audit/);
  const key = stack().keys.viewer;
  expect(await page.evaluate(() => document.cookie)).not.toContain(key);
  expect(await page.content()).not.toContain(key);
  const session = (await page.context().cookies()).filter((c) => c.httpOnly);
  expect(session.length).toBeGreaterThan(0);
  expect(session.every((c) => c.sameSite === "Strict")).toBe(true);

  // Signing out ends the session.
  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/login/);
  await page.goto("/queue");
  await expect(page).toHaveURL(/\/login\?next=%2Fqueue/);
});

test("a viewer sees the queue but no resolution buttons, and the API refuses a resolution through the web proxy", async ({
  page,
}) => {
  const { tools, names, webUrl } = stack();
  const seeder = new Seeder("viewer");
  const rec = await seeder.call(tools.viewer, "needs_human");
  const before = (await api.intent(rec.key)).record;

  await login(page, "viewer", "/queue");
  await expect(page).toHaveURL(/\/queue/);
  const body = page.locator("body");
  await expect(body).toContainText(names.viewer);
  await expect(body).toContainText("viewer");
  const row = queueRow(page, rec.key);
  await expect(row).toBeVisible();
  await row.click();
  for (const action of ACTIONS) await expect(page.getByRole("button", { name: action })).toHaveCount(0);
  await page.keyboard.press("1");
  await expect(page.getByRole("dialog")).toHaveCount(0);

  await page.goto(`/intents/${rec.key}`);
  await expect(page.getByTestId("status")).toContainText(/unknown/i);
  await expect(page.getByRole("button", { name: "Re-run probe now" })).toHaveCount(0);
  for (const action of ACTIONS) await expect(page.getByRole("button", { name: action })).toHaveCount(0);

  // The same request the operator's dialog sends, with the viewer's session: refused by the API.
  const res = await page.request.post("/api/trpc/queue.resolve", {
    headers: { "content-type": "application/json", origin: webUrl },
    data: {
      key: rec.key,
      action: "confirm_effect",
      note: "a viewer trying anyway",
      expectedVersion: before.version,
      operatorActionId: randomUUID(),
    },
  });
  expect(res.status()).toBe(403);
  const after = (await api.intent(rec.key)).record;
  expect(after).toMatchObject({ status: "UNKNOWN", needsHuman: true, version: before.version });
  const { json } = await api.get("audit.list", { tool: tools.viewer });
  expect(json.result.data.entries).toHaveLength(0);
});
