/**
 * Issue 22 §4, search by business identity: "what happened to order A-1182?" — the order id typed in
 * the search box opens the records whose identity holds it (any tool, the matched field shown), in
 * the tenant being viewed only; the same without JavaScript through `/search`; a run id still opens
 * its run. Records are seeded in fresh tenants, read through an admin's tenant filter.
 */
import { randomUUID } from "node:crypto";
import type { Page } from "@playwright/test";
import { api, expect, Seeder, screenshot, stack, test } from "../src/fixtures.ts";

/** A fresh tenant with an agent key of its own. */
async function freshTenant(label: string): Promise<{ tenant: string; agentKey: string }> {
  const tenant = `${label}-${randomUUID().slice(0, 6)}`;
  const { status, json } = await api.post(
    "keys.create",
    { name: `agent-${tenant}`, role: "agent", tenant },
    stack().keys.admin,
  );
  expect(status, JSON.stringify(json)).toBe(200);
  return { tenant, agentKey: json.result.data.secret };
}

/** Signs in with the admin key (the tenant filter is an admin's) and opens `next`. */
async function loginAdmin(page: Page, next: string): Promise<void> {
  await page.goto(`/login?next=${encodeURIComponent(next)}`);
  await page.waitForLoadState("networkidle");
  await page.getByLabel("API key").fill(stack().keys.admin);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).not.toHaveURL(/\/login(\?|$)/);
}

test("an order id typed in the search box lists its records across tools, with the field that matched, and no other tenant's", async ({
  page,
}, testInfo) => {
  const { tools } = stack();
  const order = `A-${randomUUID().slice(0, 6).toUpperCase()}`;
  const mine = await freshTenant("ids");
  const other = await freshTenant("ids-other");
  const seeder = new Seeder("identity", mine.agentKey);
  const refund = await seeder.call(tools.trace, "succeeded", "504", { order_id: order });
  const again = await seeder.call(tools.pages, "succeeded", "504", { order_id: order });
  const unrelated = await seeder.call(tools.trace, "succeeded");
  const theirs = await new Seeder("identity-other", other.agentKey).call(tools.trace, "succeeded", "504", {
    order_id: order,
  });

  await loginAdmin(page, `/runs?tenant=${mine.tenant}`);
  const search = page.getByLabel("Search");
  await search.fill(`  ${order.toLowerCase()} `);
  await search.press("Enter");
  await expect(page).toHaveURL(
    new RegExp(`/identity\\?value=${order.toLowerCase()}&tenant=${mine.tenant}$`.replaceAll("-", "\\-")),
  );
  await expect(page.getByRole("heading", { level: 1 })).toContainText(order.toLowerCase());
  const table = page.getByRole("table", { name: "Records by identity" });
  await expect(table.getByRole("row")).toHaveCount(3); // the header and two records
  const rows = table.getByRole("row");
  // Newest first: the second call, then the first; each says which identity field held the value.
  await expect(rows.nth(1)).toContainText(again.key);
  await expect(rows.nth(1)).toContainText(tools.pages);
  await expect(rows.nth(2)).toContainText(refund.key);
  await expect(rows.nth(2)).toContainText(tools.trace);
  for (const i of [1, 2]) await expect(rows.nth(i)).toContainText(`order_id = ${order}`);
  await expect(table).not.toContainText(unrelated.key);
  await expect(table).not.toContainText(theirs.key);
  await screenshot(page, "identity-search", testInfo);

  // A record's key opens from the list.
  await table.getByRole("link", { name: refund.key }).click();
  await expect(page).toHaveURL(new RegExp(`/intents/${refund.key}`));

  // The other tenant's view finds only its own record.
  await page.goto(`/identity?value=${order}&tenant=${other.tenant}`);
  const theirTable = page.getByRole("table", { name: "Records by identity" });
  await expect(theirTable.getByRole("row")).toHaveCount(2);
  await expect(theirTable).toContainText(theirs.key);

  // A value nobody holds says so.
  await page.goto(`/identity?value=NO-SUCH-ORDER&tenant=${mine.tenant}`);
  await expect(page.getByText("No record’s identity holds “NO-SUCH-ORDER”.")).toBeVisible();

  // A run id whose run exists (and that no identity holds) still opens the run.
  await page.getByLabel("Search").fill(seeder.runId);
  await page.getByLabel("Search").press("Enter");
  await expect(page).toHaveURL(new RegExp(`/runs/${seeder.runId}`));
});

test("a value not held as typed is found with a '#' added, and a sentence by its id-like word, saying what matched", async ({
  page,
}) => {
  const { tools } = stack();
  const id = `W${randomUUID().replace(/\D/g, "").slice(0, 7).padEnd(7, "1")}`;
  const order = `A-${randomUUID().replace(/\D/g, "").slice(0, 5).padEnd(5, "2")}`;
  const mine = await freshTenant("ids-alt");
  const seeder = new Seeder("identity-alt", mine.agentKey);
  const hashed = await seeder.call(tools.trace, "succeeded", "504", { order_id: `#${id}` });
  const plain = await seeder.call(tools.trace, "succeeded", "504", { order_id: order });

  await loginAdmin(page, `/runs?tenant=${mine.tenant}`);
  const search = page.getByLabel("Search");
  await search.fill(id);
  await search.press("Enter");
  await expect(page).toHaveURL(/\/identity\?value=%23W\d+&asked=W\d+/);
  await expect(page.getByTestId("search-matched")).toHaveText(`No record holds “${id}” as typed; these hold “#${id}”.`);
  const table = page.getByRole("table", { name: "Records by identity" });
  await expect(table).toContainText(hashed.key);

  await page.getByLabel("Search").fill(`what happened to order ${order}?`);
  await page.getByLabel("Search").press("Enter");
  await expect(page.getByRole("heading", { level: 1 })).toContainText(`“${order}”`);
  await expect(page.getByTestId("search-matched")).toContainText(`what happened to order ${order}?`);
  await expect(page.getByRole("table", { name: "Records by identity" })).toContainText(plain.key);
});

test("without JavaScript, /search sends an order id to its records", async ({ browser }) => {
  const { tools } = stack();
  const order = `B-${randomUUID().slice(0, 6).toUpperCase()}`;
  const mine = await freshTenant("ids-nojs");
  const rec = await new Seeder("identity-nojs", mine.agentKey).call(tools.trace, "succeeded", "504", {
    order_id: order,
  });
  const context = await browser.newContext({ javaScriptEnabled: false });
  const page = await context.newPage();
  try {
    await page.goto(`/login?next=${encodeURIComponent(`/runs?tenant=${mine.tenant}`)}`);
    await page.getByLabel("API key").fill(stack().keys.admin);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page).not.toHaveURL(/\/login(\?|$)/);
    await page.goto(`/search?q=${order}&tenant=${mine.tenant}`);
    await expect(page).toHaveURL(
      new RegExp(`/identity\\?value=${order}&tenant=${mine.tenant}$`.replaceAll("-", "\\-")),
    );
  } finally {
    await context.close();
  }
  expect(rec.key).toMatch(/^[0-9a-f]{32}$/);
});
