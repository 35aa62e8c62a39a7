import { expect, login, test } from "../src/fixtures.ts";

test.use({ timezoneId: "America/New_York" });

test("live refresh says when the page was updated and can be paused; times switch to UTC", async ({ page }) => {
  await login(page, "viewer", "/overview?range=1h");
  await expect(page.getByRole("table", { name: "Reliability per tool" })).toBeVisible();
  const updated = page.getByTestId("updated-ago");
  await expect(updated).toHaveText(/^Live · updated \d+ s ago$/);
  await page.getByRole("button", { name: "Pause" }).click();
  await expect(updated).toContainText("Paused");
  await expect(page.getByRole("button", { name: "Resume" })).toHaveAttribute("aria-pressed", "true");
  await page.getByRole("button", { name: "Resume" }).click();
  await expect(updated).toContainText("Live");
  // Resume refetches at once: updated a moment ago, not at the next interval.
  await expect(updated).toHaveText(/^Live · updated [0-2] s ago$/);

  // The table's sort lives in the URL, like the filters, and survives a reload.
  await page.getByRole("button", { name: "Calls" }).click();
  await expect(page).toHaveURL(/[?&]sort=-?calls/);
  const sorted = new URL(page.url()).searchParams.get("sort");
  await page.reload();
  await expect(page.getByRole("columnheader", { name: "Calls" })).toHaveAttribute(
    "aria-sort",
    sorted?.startsWith("-") ? "descending" : "ascending",
  );
  await expect(page).toHaveURL(/range=1h/);
  // Counts with their noun: never "1 calls".
  await expect(page.locator("body")).not.toContainText(/\b1 calls\b/);

  // The toggle says which zone is shown and what clicking does (the browser here is in New York).
  await expect(page.getByTestId("time-zone")).toHaveText("America/New_York (GMT-5)");
  await page.getByRole("button", { name: "Show times in UTC" }).click();
  await expect(page.getByTestId("time-zone")).toHaveText("UTC");
  await expect(page.getByRole("button", { name: "Show times in local time (America/New_York (GMT-5))" })).toBeVisible();
  await expect(page.getByText(/^Calls created from .+ UTC to .+ UTC\./)).toBeVisible();
  // The choice is kept across pages.
  await page.goto("/audit");
  await expect(page.getByTestId("time-zone")).toHaveText("UTC");
  await page.getByRole("button", { name: /^Show times in local time/ }).click();
  await expect(page.getByTestId("time-zone")).toHaveText(/^America\/New_York/);
});

test.describe("a browser whose zone is UTC", () => {
  test.use({ timezoneId: "UTC" });
  test("is told times are in UTC, its own zone, and offered no other", async ({ page }) => {
    await login(page, "viewer", "/overview?range=24h");
    await expect(page.getByRole("table", { name: "Reliability per tool" })).toBeVisible();
    await expect(page.locator(".zone-toggle")).toContainText("UTC, this browser's zone");
    await expect(page.getByRole("button", { name: /Show times in/ })).toHaveCount(0);
    await expect(page.locator(".zone-toggle")).not.toContainText("GMT");
  });
});
