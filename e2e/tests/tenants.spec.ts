/**
 * Tenancy in the dashboard (issue 10: "admins all, with a tenant filter in the dashboard"), in Chromium
 * against the real stack: records are seeded in two tenants through the executor API with each tenant's
 * agent key; an admin switches the header's Tenant filter (kept in `?tenant=`, carried across pages)
 * and sees only that tenant's records; a viewer of one tenant never sees, nor reaches by URL, the
 * other's. And the dashboard's sign-in passes the browser's address on (X-Forwarded-For), so failed
 * sign-ins are throttled per browser, not per web server.
 */
import { randomInt, randomUUID } from "node:crypto";
import type { Page } from "@playwright/test";
import {
  api,
  expect,
  expectNoSeriousA11yViolations,
  queueRow,
  type Seeded,
  Seeder,
  stack,
  test,
} from "../src/fixtures.ts";

/** Creates a key of `role` in `tenant` with the stack's admin key; returns its secret. */
async function createKey(role: "agent" | "viewer", tenant: string): Promise<string> {
  const { status, json } = await api.post(
    "keys.create",
    { name: `${role}-${tenant}`, role, tenant },
    stack().keys.admin,
  );
  expect(status, JSON.stringify(json)).toBe(200);
  return json.result.data.secret;
}

/** Two fresh tenants, each with an agent key and one record waiting in the human queue. */
async function seedTwoTenants(): Promise<{ a: string; b: string; recA: Seeded; recB: Seeded; viewerB: string }> {
  const suffix = randomUUID().slice(0, 6);
  const a = `alpha-${suffix}`;
  const b = `beta-${suffix}`;
  const recA = await new Seeder("tenant-a", await createKey("agent", a)).call(stack().tools.tenants, "needs_human");
  const recB = await new Seeder("tenant-b", await createKey("agent", b)).call(stack().tools.tenants, "needs_human");
  return { a, b, recA, recB, viewerB: await createKey("viewer", b) };
}

/** Signs in through the login page with any key. */
async function loginWithKey(page: Page, key: string, next = "/overview"): Promise<void> {
  await page.goto(`/login?next=${encodeURIComponent(next)}`);
  await page.waitForLoadState("networkidle");
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).not.toHaveURL(/\/login(\?|$)/);
}

/** The link to a record's page in the intents list. */
function recordLink(page: Page, key: string) {
  return page.getByRole("table", { name: "Intent records" }).getByRole("link", { name: key });
}

test("an admin switches tenant: the intents list and the queue show only that tenant's records", async ({
  page,
}, testInfo) => {
  const { a, b, recA, recB } = await seedTwoTenants();
  await loginWithKey(page, stack().keys.admin, `/intents?tool=${stack().tools.tenants}`);

  // All tenants: both records, with a Tenant column.
  const picker = page.getByLabel("Tenant", { exact: true });
  await expect(picker).toHaveValue("");
  await expect(recordLink(page, recA.key)).toBeVisible();
  await expect(recordLink(page, recB.key)).toBeVisible();
  const table = page.getByRole("table", { name: "Intent records" });
  await expect(table.getByRole("columnheader", { name: "Tenant" })).toBeVisible();
  await expect(table.getByRole("row").filter({ has: page.getByRole("link", { name: recA.key }) })).toContainText(a);
  await expect(picker.getByRole("option")).toContainText(["All tenants", a, b]);
  await expectNoSeriousA11yViolations(page, "intents-all-tenants", testInfo);

  // Tenant A, chosen with the keyboard: only A's record, no Tenant column, the filter in the URL.
  await picker.focus();
  await picker.selectOption(a);
  await expect(page).toHaveURL(new RegExp(`[?&]tenant=${a}(&|$)`));
  await expect(page).toHaveURL(/tool=tenants_refund/);
  await expect(recordLink(page, recA.key)).toBeVisible();
  await expect(recordLink(page, recB.key)).toHaveCount(0);
  await expect(table.getByRole("columnheader", { name: "Tenant" })).toHaveCount(0);

  // The filter travels with the navigation: the queue shows A's record only.
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Human queue" }).click();
  await expect(page).toHaveURL(new RegExp(`/queue\\?tenant=${a}$`));
  await expect(page.getByLabel("Tenant", { exact: true })).toHaveValue(a);
  await expect(queueRow(page, recA.key)).toBeVisible();
  await expect(queueRow(page, recB.key)).toHaveCount(0);

  // Tenant B on the queue page: only B's record.
  await page.getByLabel("Tenant", { exact: true }).selectOption(b);
  await expect(page).toHaveURL(new RegExp(`/queue\\?tenant=${b}$`));
  await expect(queueRow(page, recB.key)).toBeVisible();
  await expect(queueRow(page, recA.key)).toHaveCount(0);

  // And back to every tenant: both, each labelled with its tenant.
  await page.getByLabel("Tenant", { exact: true }).selectOption({ label: "All tenants" });
  await expect(page).toHaveURL(/\/queue$/);
  await expect(queueRow(page, recA.key).getByTestId("tenant")).toHaveText(a);
  await expect(queueRow(page, recB.key).getByTestId("tenant")).toHaveText(b);
  await expectNoSeriousA11yViolations(page, "queue-all-tenants", testInfo);

  // The run page and the overview honour the filter too.
  await page.goto(`/runs/${encodeURIComponent(recA.runId)}?tenant=${b}`);
  await expect(page.getByText(`No intent record belongs to a run with the id “${recA.runId}”`)).toBeVisible();
  await page.goto(`/runs/${encodeURIComponent(recA.runId)}?tenant=${a}`);
  await expect(page.getByRole("table", { name: "Steps" })).toContainText(recA.key);
  await page.goto(`/overview?range=1h&tenant=${a}`);
  await expect(page.getByTestId("tenant-scope")).toContainText(`Tenant ${a} only.`);
});

test("a viewer of tenant B sees only B's records, cannot reach A's by URL, and has no tenant filter", async ({
  page,
}) => {
  const { a, b, recA, recB, viewerB } = await seedTwoTenants();
  await loginWithKey(page, viewerB, `/intents?tool=${stack().tools.tenants}`);

  await expect(page.getByTestId("session-tenant")).toHaveText(b);
  await expect(page.getByRole("combobox", { name: "Tenant" })).toHaveCount(0);
  await expect(recordLink(page, recB.key)).toBeVisible();
  await expect(recordLink(page, recA.key)).toHaveCount(0);

  // Naming tenant A in the URL changes nothing: the executor scopes a viewer to its own tenant.
  await page.goto(`/queue?tenant=${a}`);
  await expect(queueRow(page, recB.key)).toBeVisible();
  await expect(queueRow(page, recA.key)).toHaveCount(0);

  // A's record and run, by URL: not found (the same answer as for a key that does not exist).
  await page.goto(`/intents/${recA.key}`);
  await expect(page.getByText(`No record has the key ${recA.key}.`)).toBeVisible();
  await page.goto(`/runs/${encodeURIComponent(recA.runId)}`);
  await expect(page.getByText(`No intent record belongs to a run with the id “${recA.runId}”`)).toBeVisible();
  // Its own record opens.
  await page.goto(`/intents/${recB.key}`);
  await expect(page.getByTestId("idempotency-key")).toHaveText(recB.key);
});

test("failed sign-ins are throttled per browser address (X-Forwarded-For), not per web server", async ({ browser }) => {
  const { webUrl } = stack();
  // Addresses of the documentation ranges, fresh per run so earlier runs' counts never matter.
  const first = `198.51.100.${randomInt(1, 255)}`;
  const second = `203.0.113.${randomInt(1, 255)}`;
  const browserAt = async (address: string) => {
    const context = await browser.newContext({ baseURL: webUrl, extraHTTPHeaders: { "x-forwarded-for": address } });
    const page = await context.newPage();
    await page.goto("/login");
    await page.waitForLoadState("networkidle");
    return { context, page };
  };
  const signInWith = async (page: Page, key: string) => {
    const answer = page.waitForResponse((r) => r.url().endsWith("/api/session") && r.request().method() === "POST");
    await page.getByLabel("API key").fill(key);
    await page.getByRole("button", { name: "Sign in" }).click();
    return (await answer).status();
  };

  const one = await browserAt(first);
  const two = await browserAt(second);
  try {
    // The executor's default: 10 failures per address and minute, then 429.
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push(await signInWith(one.page, `ts_viewer_wrong${i}`));
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses[10]).toBe(429);
    await expect(one.page.getByRole("alert").filter({ hasText: "Too many failed sign-ins" })).toBeVisible();

    // Another browser address is counted on its own: a bad key is plainly refused, a good one signs in.
    expect(await signInWith(two.page, "ts_viewer_wrong")).toBe(401);
    await expect(two.page.getByRole("alert").filter({ hasText: "invalid or revoked" })).toBeVisible();
    expect(await signInWith(two.page, stack().keys.viewer)).toBe(200);
    await expect(two.page).not.toHaveURL(/\/login(\?|$)/);

    // A valid key is never throttled, even from the throttled address.
    expect(await signInWith(one.page, stack().keys.viewer)).toBe(200);
  } finally {
    await one.context.close();
    await two.context.close();
  }
});
