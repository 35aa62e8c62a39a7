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
