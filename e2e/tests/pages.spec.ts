import type { Locator, Page } from "@playwright/test";
import {
  api,
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

/**
 * The name the executor gives the admin key it makes at first start (apps/executor/src/service.ts):
 * what a newcomer's header shows, and about the longest name a person gives a key.
 */
const FIRST_START_KEY_NAME = "first admin (created at first start)";

/** Where the header's parts are: one row or not, sideways overflow, Sign out's and each nav entry's box. */
async function headerLayout(page: Page) {
  return page.locator("header.topbar").evaluate((el) => {
    const boxes = Array.from(el.children, (c) => c.getBoundingClientRect());
    const signOut = Array.from(el.querySelectorAll("button")).find((b) => b.textContent?.trim() === "Sign out");
    const out = (r: DOMRect) => r.left < 0 || r.right > window.innerWidth || r.width === 0;
    return {
      // One row: every part overlaps every other vertically (a wrapped part starts below another's bottom).
      oneRow: Math.max(...boxes.map((b) => b.top)) < Math.min(...boxes.map((b) => b.bottom)),
      tops: boxes.map((b) => Math.round(b.top)),
      overflow: Math.max(el.scrollWidth - el.clientWidth, document.documentElement.scrollWidth - window.innerWidth),
      signOutRight: signOut ? Math.round(signOut.getBoundingClientRect().right) : -1,
      signOutOnScreen: signOut ? !out(signOut.getBoundingClientRect()) : false,
      navOffScreen: Array.from(el.querySelectorAll("nav a"))
        .filter((a) => out(a.getBoundingClientRect()))
        .map((a) => a.getAttribute("href")),
      width: window.innerWidth,
    };
  });
}

test("the header fits at 1280 px on every page: an admin key named as long as the first-start key's (tenant picker shown), and an operator", async ({
  page,
}, testInfo) => {
  const longName = `${FIRST_START_KEY_NAME}, header check`;
  const made = await api.post("keys.create", { name: longName, role: "admin" }, stack().keys.admin);
  expect(made.status, JSON.stringify(made.json)).toBe(200);
  const longAdmin: { id: string } = made.json.result.data.info;
  try {
    for (const who of [
      { role: "admin", secret: made.json.result.data.secret as string },
      { role: "operator", secret: stack().keys.operator },
    ] as const) {
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.goto("/login?next=%2Foverview");
      await page.waitForLoadState("networkidle");
      await page.getByLabel("API key").fill(who.secret);
      await page.getByRole("button", { name: "Sign in" }).click();
      await expect(page).toHaveURL(/\/overview/);
      const header = page.locator("header.topbar");
      // The admin's header holds the tenant picker (a select), the operator's its tenant's name.
      if (who.role === "admin") {
        await expect(header.getByRole("combobox", { name: "Tenant" })).toBeVisible();
        // Cut on screen, whole in its title.
        await expect(header.locator(".who-name")).toHaveAttribute("title", `${longName} (admin)`);
      } else {
        await expect(header.getByTestId("session-tenant")).toBeVisible();
      }
      const nav = page.getByRole("navigation", { name: "Main" });
      const hrefs = await nav.getByRole("link").evaluateAll((links) => links.map((a) => a.getAttribute("href") ?? ""));
      expect(hrefs.length, `${who.role}: nav entries`).toBeGreaterThanOrEqual(who.role === "admin" ? 8 : 7);
      if (who.role === "admin") expect(hrefs.some((h) => h.startsWith("/notifications"))).toBe(true);
      for (const href of hrefs) {
        await page.goto(href);
        await expect(header.getByRole("button", { name: "Sign out" })).toBeVisible();
        await page.waitForLoadState("networkidle");
        const at = await headerLayout(page);
        const where = `${who.role} on ${href} at 1280 px`;
        expect(at.signOutOnScreen, `${where}: Sign out's right edge ${at.signOutRight} within ${at.width}`).toBe(true);
        expect(at.navOffScreen, `${where}: nav entries off screen`).toEqual([]);
        expect(at.oneRow, `${where}: header parts' tops ${at.tops.join(", ")}`).toBe(true);
        expect(at.overflow, `${where}: sideways overflow`).toBeLessThanOrEqual(0);
      }
      if (who.role === "admin") {
        await page.goto("/overview");
        await expect(header.getByRole("button", { name: "Sign out" })).toBeVisible();
        await screenshot(page, "header-1280-admin", testInfo);
        // Wider: one row still; narrower: it may wrap to two rows, never sideways.
        for (const width of [1440, 1024]) {
          await page.setViewportSize({ width, height: 800 });
          const at = await headerLayout(page);
          expect(at.signOutOnScreen, `at ${width} px: Sign out's right edge ${at.signOutRight}`).toBe(true);
          expect(at.navOffScreen, `at ${width} px: nav entries off screen`).toEqual([]);
          expect(at.overflow, `at ${width} px: sideways overflow`).toBeLessThanOrEqual(0);
          if (width === 1440) expect(at.oneRow, `at 1440 px: tops ${at.tops.join(", ")}`).toBe(true);
          await screenshot(page, `header-${width}-admin`, testInfo);
        }
        await page.setViewportSize({ width: 1280, height: 800 });
      }
      // Sign out works from the keyboard.
      await header.getByRole("button", { name: "Sign out" }).focus();
      await page.keyboard.press("Enter");
      await expect(page).toHaveURL(/\/login/);
    }
  } finally {
    await api.post("keys.revoke", { id: longAdmin.id }, stack().keys.admin);
  }
});
