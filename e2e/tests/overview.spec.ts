import { randomUUID } from "node:crypto";
import { expect, type Locator, type Page } from "@playwright/test";
import { api, login, overviewUrl, Seeder, stack, test } from "../src/fixtures.ts";

/** The overview table's row for a tool (its first cell is the tool name). */
function toolRow(page: Page, tool: string): Locator {
  const table = page.getByRole("table", { name: "Reliability per tool" });
  return table.getByRole("row").filter({
    has: page.locator(":scope > :first-child", { hasText: new RegExp(`^\\s*${tool}(?![\\w])`) }),
  });
}

test("the overview shows the UNKNOWN share and how the UNKNOWNs ended, for the seeded calls", async ({ page }) => {
  const { tools } = stack();
  const from = Date.now() - 1000;
  const seeder = new Seeder("overview");
  // Keyed tool with probes: 4 calls, 3 of them UNKNOWN at first — 2 found, 1 absent → resent.
  await seeder.call(tools.overviewKeyed, "succeeded");
  await seeder.call(tools.overviewKeyed, "found", "504");
  await seeder.call(tools.overviewKeyed, "found", "hang");
  await seeder.call(tools.overviewKeyed, "absent_resent", "reset");
  // Unsafe tool without probes: 4 calls, 2 UNKNOWN — one settled by an operator, one still open.
  await seeder.call(tools.overviewManual, "succeeded");
  await seeder.call(tools.overviewManual, "succeeded");
  const settled = await seeder.call(tools.overviewManual, "needs_human");
  await seeder.call(tools.overviewManual, "needs_human");
  await seeder.resolve(settled.key, "confirm_no_effect", "nothing at the PSP");
  const to = Date.now() + 1000;

  await login(page, "viewer", overviewUrl(from, to));
  await expect(page).toHaveURL(/\/overview\?/);
  await expect(page.getByLabel("Time range")).toBeVisible();
  await expect(page.getByRole("table", { name: "Reliability per tool" })).toBeVisible();

  const keyed = toolRow(page, tools.overviewKeyed);
  await expect(keyed).toHaveCount(1);
  await expect(keyed.getByTestId("calls")).toHaveText("4");
  await expect(keyed.getByTestId("unknown-share")).toContainText("75.0%");
  await expect(keyed.getByTestId("resolution-found")).toHaveText("2");
  await expect(keyed.getByTestId("resolution-absent_resent")).toHaveText("1");
  await expect(keyed.getByTestId("resolution-human_confirmed_no_effect")).toHaveText("0");
  await expect(keyed.getByTestId("resolution-open")).toHaveText("0");
  await expect(keyed.getByTestId("resolution-other")).toHaveText("0");
  await expect(keyed.getByTestId("compensations")).toHaveText(/^\s*0\s*\/\s*0\s*$/);
  await expect(keyed.getByTestId("stale")).toContainText("0");
  await expect(keyed.getByTestId("latency")).toBeVisible();

  const manual = toolRow(page, tools.overviewManual);
  await expect(manual.getByTestId("calls")).toHaveText("4");
  await expect(manual.getByTestId("unknown-share")).toContainText("50.0%");
  await expect(manual.getByTestId("resolution-found")).toHaveText("0");
  await expect(manual.getByTestId("resolution-absent_resent")).toHaveText("0");
  await expect(manual.getByTestId("resolution-human_confirmed_effect")).toHaveText("0");
  await expect(manual.getByTestId("resolution-human_confirmed_no_effect")).toHaveText("1");
  await expect(manual.getByTestId("resolution-human_resent")).toHaveText("0");
  await expect(manual.getByTestId("resolution-open")).toHaveText("1");
  await expect(manual.getByTestId("resolution-other")).toHaveText("0");

  // The whole table fits at 1440 px (no horizontal scrolling).
  const wrap = page.locator(".table-wrap").filter({ has: page.getByRole("table", { name: "Reliability per tool" }) });
  expect(await wrap.evaluate((el) => el.scrollWidth - el.clientWidth)).toBeLessThanOrEqual(1);
  // Calls and UNKNOWN share over time: a chart per tool with calls.
  await expect(page.locator(`[data-testid="tool-series"][data-tool="${tools.overviewKeyed}"]`)).toBeVisible();

  // A catalog tool without calls in this window is hidden by default; shown on request, with nothing counted.
  await expect(toolRow(page, tools.queue)).toHaveCount(0);
  await page.getByRole("link", { name: /Show the \d+ tools without calls/ }).click();
  await expect(page).toHaveURL(/all=1/);
  const idle = toolRow(page, tools.queue);
  await expect(idle.getByTestId("calls")).toHaveText("0");

  // A window before these calls counts none of them.
  await page.goto(`${overviewUrl(from - 3_600_000, from - 1_800_000)}&all=1`);
  await expect(toolRow(page, tools.overviewKeyed).getByTestId("calls")).toHaveText("0");

  // A preset in the URL: the last hour holds exactly this test's calls of these tools.
  await page.goto("/overview?range=1h");
  await expect(toolRow(page, tools.overviewKeyed).getByTestId("calls")).toHaveText("4");
  await expect(toolRow(page, tools.overviewManual).getByTestId("unknown-share")).toContainText("50.0%");
});

test("a young database opens on the last 15 minutes, in 1-minute slices; a range in the URL wins", async ({ page }) => {
  // A fresh tenant: its only record is seconds old, so its viewer sees a young database.
  const tenant = `young-${randomUUID().slice(0, 8)}`;
  const keyOf = async (role: "agent" | "viewer") => {
    const { status, json } = await api.post(
      "keys.create",
      { name: `${role}-${tenant}`, role, tenant },
      stack().keys.admin,
    );
    expect(status, JSON.stringify(json)).toBe(200);
    return json.result.data.secret as string;
  };
  await new Seeder("young-db", await keyOf("agent")).call(stack().tools.overviewKeyed, "found", "504");
  const viewer = await keyOf("viewer");

  await page.goto("/login?next=%2Foverview");
  await page.waitForLoadState("networkidle");
  await page.getByLabel("API key").fill(viewer);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/overview$/);
  await expect(page.getByLabel("Time range")).toHaveValue("15m");
  await expect(page.getByLabel("Time range").locator("option:checked")).toHaveText("Last 15 minutes");
  const row = toolRow(page, stack().tools.overviewKeyed);
  await expect(row.getByTestId("calls")).toHaveText("1");
  await expect(row.getByTestId("resolution-found")).toHaveText("1");
  // The overview asked for the last 15 minutes in 1-minute slices.
  const asked = await page.evaluate(() =>
    performance
      .getEntriesByType("resource")
      .map((e) => decodeURIComponent(e.name))
      .filter((n) => n.includes("stats.overview")),
  );
  const input = asked.map((n) => /"fromEpochMs":(\d+),"toEpochMs":(\d+),"buckets":(\d+)/.exec(n)).find(Boolean);
  expect(input, asked.join("\n")).toBeTruthy();
  expect(Number(input![2]) - Number(input![1])).toBe(15 * 60_000);
  expect(Number(input![3])).toBe(15);

  // An explicit range in the URL always wins over the fitted default.
  await page.goto("/overview?range=24h");
  await expect(page.getByLabel("Time range")).toHaveValue("24h");
  await expect(toolRow(page, stack().tools.overviewKeyed).getByTestId("calls")).toHaveText("1");
});
