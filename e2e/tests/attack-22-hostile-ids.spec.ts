/**
 * Issue 22 attack on the dashboard's new pages: identity values and run ids an agent chose (any
 * printable ASCII) shown on the identity search page and linked to the run page. Invariants: a value
 * is shown as text, never as markup (no element made from it, no script run); a link built from a
 * run id opens that run's page, whatever characters the id holds (`/`, `?`, `#`, `%`, `..`).
 */
import { randomUUID } from "node:crypto";
import type { Page } from "@playwright/test";
import { api, expect, stack, test } from "../src/fixtures.ts";

const MARKUP = '<img src=x onerror="window.__xss=1">';

/** A run id beside a record of the `traced_refund` tool whose order id is `order`, in the stack's tenant. */
async function seed(runId: string, order: string): Promise<string> {
  const { status, json } = await api.post(
    "calls.execute",
    {
      runId,
      stepId: "s1",
      tool: stack().tools.trace,
      args: { order_id: order, amount: "1.00", currency: "EUR" },
      budgetMs: 20_000,
    },
    stack().keys.agent,
  );
  expect(status, JSON.stringify(json)).toBe(200);
  return json.result.data.idempotency_key as string;
}

async function login(page: Page, next: string): Promise<void> {
  await page.goto(`/login?next=${encodeURIComponent(next)}`);
  await page.waitForLoadState("networkidle");
  await page.getByLabel("API key").fill(stack().keys.viewer);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).not.toHaveURL(/\/login(\?|$)/);
}

test("a hostile identity value is shown as text on the identity page, and no script runs", async ({ page }) => {
  const tag = randomUUID().slice(0, 6);
  const order = `${MARKUP}-${tag}`;
  const key = await seed(`xss-${tag}`, order);
  await login(page, `/identity?value=${encodeURIComponent(order)}`);
  const table = page.getByRole("table", { name: "Records by identity" });
  await expect(table).toContainText(key);
  // The tool stores the order id upper case: shown as typed text in the heading and the matched field.
  await expect(page.getByRole("heading", { level: 1 })).toContainText(order);
  await expect(table).toContainText(`order_id = ${order.toUpperCase()}`);
  expect(await page.locator("img[onerror], img[src='x'], img[src='X']").count()).toBe(0);
  expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
});

const RUN_IDS = ["a/b?c#d", "100%", "%2e%2e", "..", ".", MARKUP.replaceAll(" ", "_")];

for (const shape of RUN_IDS) {
  test(`a run id ${JSON.stringify(shape)}: its link from the identity page opens that run`, async ({ page }) => {
    // "." and ".." as a path segment are dot segments the browser resolves away: runPath puts them in the query.
    const tag = randomUUID().slice(0, 6);
    const runId = shape.length <= 2 ? shape : `${shape}-${tag}`;
    const order = `RUNID-${tag}`;
    const key = await seed(runId, order);
    await login(page, `/identity?value=${order}`);
    const table = page.getByRole("table", { name: "Records by identity" });
    await expect(table).toContainText(key);
    await table.getByRole("link", { name: runId, exact: true }).click();
    await expect(page.getByRole("heading", { level: 1 })).toHaveText(`Run ${runId}`);
    await expect(page.getByRole("table", { name: "Steps", exact: true })).toContainText("s1");
    expect(await page.locator("img[onerror]").count()).toBe(0);
  });
}
