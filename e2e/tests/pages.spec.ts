import type { Locator, Page } from "@playwright/test";
import {
  expect,
  expectNoSeriousA11yViolations,
  login,
  openAction,
  Seeder,
  screenshot,
  stack,
  test,
} from "../src/fixtures.ts";

// Wide enough for the overview's table without horizontal scrolling (the README shows these screenshots).
test.use({ viewport: { width: 1680, height: 1000 } });

/** Waits until a page shows its content (its main table, or its empty state). */
async function ready(page: Page, content: Locator): Promise<void> {
  await expect(content.first()).toBeVisible();
  await page.waitForLoadState("networkidle");
}

test("every page passes axe-core with no serious or critical violations, and is screenshotted", async ({
  page,
}, testInfo) => {
  const { tools } = stack();
  const seeder = new Seeder("pages");
  await seeder.call(tools.pages, "succeeded");
  await seeder.call(tools.pages, "succeeded");
  await seeder.call(tools.pages, "found", "504");
  await seeder.call(tools.pages, "absent_resent", "reset");
  const waiting = await seeder.call(tools.pagesManual, "needs_human");
  const settled = await seeder.call(tools.pagesManual, "needs_human", "hang");
  await seeder.call(tools.pagesManual, "needs_human", "reset");
  await seeder.resolve(settled.key, "confirm_effect", "refund visible in the PSP dashboard");

  const check = async (name: string, content: Locator, docs = false) => {
    await ready(page, content);
    await expectNoSeriousA11yViolations(page, name, testInfo);
    await screenshot(page, name, testInfo, docs);
  };

  await page.goto("/login");
  await check("login", page.getByLabel("API key"));

  await login(page, "operator");
  await page.goto("/overview?range=1h");
  await check("overview", page.getByRole("table", { name: "Reliability per tool" }), true);

  await page.goto("/queue");
  await check("queue", page.getByRole("table", { name: "Human queue" }), true);
  const dialog = await openAction(page, waiting.key, "Confirm it happened");
  await dialog.getByLabel("Reason").fill("checked the PSP: the refund is there");
  await check("queue-confirmation", dialog);
  await dialog.getByRole("button", { name: "Cancel" }).click();
  await expect(dialog).toBeHidden();

  await page.goto(`/intents/${settled.key}`);
  await check("intent", page.getByRole("list", { name: "Timeline" }));

  await page.goto("/stale");
  await check("stale", page.getByRole("table", { name: "Stale PENDING" }).or(page.getByText("Nothing here")));

  await page.goto("/runs");
  await check("runs", page.getByLabel("Search"));

  await page.goto(`/runs/${seeder.runId}`);
  await check("run", page.getByRole("table", { name: "Steps" }));

  await page.goto("/audit");
  await check("audit", page.getByRole("table", { name: "Audit log" }));
});

test("the runs and records lists hydrate without a console error (no React #418: the server's 'now' is the browser's first)", async ({
  page,
}) => {
  await new Seeder("hydrate-lists").call(stack().tools.record, "succeeded");
  await login(page, "operator", "/queue");
  for (const path of ["/runs", "/intents"]) {
    const errors: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    page.on("pageerror", (e) => errors.push(e.message));
    // A full load (server HTML, then hydration), several times: a clock read twice differs by a second now and then.
    for (let i = 0; i < 3; i++) {
      await page.goto(path);
      await page.waitForLoadState("networkidle");
    }
    expect(errors, `${path} console errors`).toEqual([]);
    page.removeAllListeners("console");
    page.removeAllListeners("pageerror");
  }
});

test("at 1280 px the header is one row: navigation, search, tenant and who is signed in", async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  for (const role of ["admin", "operator"] as const) {
    // The admin's header holds the tenant picker (a select), the operator's its tenant's name.
    await page.goto("/login?next=%2Foverview");
    await page.waitForLoadState("networkidle");
    await page.getByLabel("API key").fill(stack().keys[role]);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page).toHaveURL(/\/overview/);
    const header = page.locator("header.topbar");
    await expect(header.getByRole("button", { name: "Sign out" })).toBeVisible();
    await page.waitForLoadState("networkidle");
    const rows = await header.evaluate((el) => {
      const boxes = Array.from(el.children, (c) => c.getBoundingClientRect());
      // One row: every part overlaps every other vertically (a wrapped part starts below another's bottom).
      const oneRow = Math.max(...boxes.map((b) => b.top)) < Math.min(...boxes.map((b) => b.bottom));
      return { oneRow, tops: boxes.map((b) => Math.round(b.top)), overflow: el.scrollWidth - el.clientWidth };
    });
    expect(rows.oneRow, `${role}: header parts' tops ${rows.tops.join(", ")}`).toBe(true);
    expect(rows.overflow).toBeLessThanOrEqual(0);
    await page.getByRole("button", { name: "Sign out" }).click();
    await expect(page).toHaveURL(/\/login/);
  }
});
