/**
 * Issue 14's operator-console defects, each as a class: one time zone per page that follows the
 * toggle, bad URL parameters named with their rule, runs with only a plan listed and opened, UNKNOWNs
 * counted unresolved apart from ever, the tool filter a case-insensitive substring.
 */
import type { Page } from "@playwright/test";
import { api, expect, login, Seeder, stack, test } from "../src/fixtures.ts";

// A browser far from UTC: a time written in another zone than the page's shows.
test.use({ timezoneId: "America/New_York" });

/** Every `<time>` text in the page's main area. */
async function times(page: Page): Promise<string[]> {
  return page.locator("main time").allInnerTexts();
}

test("one zone per page: captions, table cells and chart axes all in the zone the toggle names", async ({ page }) => {
  const { tools } = stack();
  const seeder = new Seeder("zones");
  await seeder.call(tools.runs, "succeeded");
  await login(page, "viewer", "/runs?range=1h");
  const row = page.locator(`[data-testid="run-row"][data-run="${seeder.runId}"]`);
  await expect(row).toHaveCount(1);
  await expect(page.getByTestId("time-zone")).toHaveText("America/New_York (GMT-5)");
  // The caption ("Started from … to …") and the cells: every time in New York's zone, none in UTC.
  await expect.poll(async () => (await times(page)).length).toBeGreaterThanOrEqual(3);
  for (const t of await times(page)) expect(t).toMatch(/(EST|GMT-5)$/);

  await page.getByRole("button", { name: "Show times in UTC" }).click();
  await expect(page.getByTestId("time-zone")).toHaveText("UTC");
  await expect.poll(async () => (await times(page)).every((t) => t.endsWith("UTC"))).toBe(true);

  // The overview's charts: the axis is labelled with the zone, and follows the toggle back.
  await page.goto("/overview?range=1h");
  const chart = page.locator(`[data-testid="tool-series"][data-tool="${tools.runs}"]`);
  await expect(chart.locator("svg")).toContainText("Time (UTC)");
  await page.getByRole("button", { name: /^Show times in local time/ }).click();
  await expect(chart.locator("svg")).toContainText("Time (America/New_York (GMT-5))");
  await expect(page.getByText(/^Calls created from .+ (EST|GMT-5) to .+ (EST|GMT-5)\./)).toBeVisible();
});

test("bad URL parameters are named with their rule; the rest of the page works", async ({ page }) => {
  const { tools } = stack();
  const seeder = new Seeder("params");
  await seeder.call(tools.runs, "succeeded");
  await login(page, "viewer", "/runs?status=bogus&from=abc&tool=runs_ref");
  const problems = page.getByTestId("param-problems");
  await expect(problems.locator('[data-param="status"]')).toContainText(
    "status must be one of open, completed, aborted, needs_attention",
  );
  await expect(problems.locator('[data-param="from"]')).toContainText("from must be a time in epoch milliseconds");
  await expect(page.locator(`[data-testid="run-row"][data-run="${seeder.runId}"]`)).toHaveCount(1);
  await problems.getByRole("link", { name: "Remove them from the address" }).click();
  await expect(page).toHaveURL(/\/runs\?tool=runs_ref$/);
  await expect(page.getByTestId("param-problems")).toHaveCount(0);

  // A start too far back for the runs list (31 days): named on the page, the default window shown instead.
  await page.goto("/runs?from=0");
  await expect(page.getByTestId("param-problems")).toContainText(
    "from must be at most 31 days before to (default: now)",
  );
  await expect(page.locator(`[data-testid="run-row"][data-run="${seeder.runId}"]`)).toHaveCount(1);

  await page.goto("/intents?status=LOST&range=2w");
  await expect(page.getByTestId("param-problems")).toContainText("status must be one of PENDING");
  await expect(page.getByTestId("param-problems")).toContainText("range must be one of 15m, 1h, 6h, 24h, 7d");
  await page.goto("/audit?action=nuke");
  await expect(page.getByTestId("param-problems")).toContainText("action must be one of");
  await page.goto("/overview?from=abc&to=1");
  await expect(page.getByTestId("param-problems")).toContainText("from must be a time in epoch milliseconds");
  await expect(page.getByRole("table", { name: "Reliability per tool" })).toBeVisible();
  // Pages without filters say so too, rather than ignore a filter silently.
  await page.goto("/queue?tool=refund");
  await expect(page.getByTestId("param-problems")).toContainText("tool is not a parameter of this page");
  await page.goto("/stale?status=UNKNOWN");
  await expect(page.getByTestId("param-problems")).toContainText("status is not a parameter of this page");
});

test("runs: a planned run with no call is listed and opens; UNKNOWNs now and ever; the tool filter is a substring", async ({
  page,
}) => {
  const { tools, keys } = stack();
  const planned = new Seeder("plan-only");
  const plan = await api.post(
    "runs.plan",
    { runId: planned.runId, steps: [{ stepId: "first", tool: tools.runs }] },
    keys.agent,
  );
  expect(plan.status, JSON.stringify(plan.json)).toBe(200);
  const found = new Seeder("ever-unknown");
  await found.call(tools.runs, "found");

  await login(page, "viewer", "/runs?range=1h");
  const planRow = page.locator(`[data-testid="run-row"][data-run="${planned.runId}"]`);
  await expect(planRow.getByTestId("run-status")).toHaveText("open");
  // No call yet: no "0 ms" duration, the plan's step count and tools instead of 0 and nothing.
  await expect(planRow).not.toContainText("0 ms");
  await expect(planRow.getByTestId("run-plan-steps")).toHaveText("plan: 1 step");
  await expect(planRow.getByTestId("run-plan-tools")).toHaveText(tools.runs);
  const foundRow = page.locator(`[data-testid="run-row"][data-run="${found.runId}"]`);
  await expect(foundRow.getByTestId("run-unknowns")).toHaveText("0");
  await expect(foundRow.getByTestId("run-ever-unknown")).toHaveText("1");
  await expect(page.getByRole("columnheader", { name: "UNKNOWN now" })).toBeVisible();
  await expect(page.getByRole("columnheader", { name: "Ever UNKNOWN" })).toBeVisible();

  await page.goto(`/runs?range=1h&tool=${tools.runs.toUpperCase().slice(0, 7)}`);
  await expect(page.locator(`[data-testid="run-row"][data-run="${found.runId}"]`)).toHaveCount(1);

  await page.goto(`/runs/${planned.runId}`);
  await expect(page.getByTestId("run-plan")).toContainText("the agent has made no call of this run yet");
  await expect(page.getByTestId("run-plan")).toContainText(`first · ${tools.runs} · not done yet`);
  // An empty step table is a "no calls yet" line, not bare headers.
  await expect(page.getByTestId("run-no-calls")).toContainText("No calls yet");
  await expect(page.getByRole("table", { name: "Steps", exact: true })).toHaveCount(0);
});
