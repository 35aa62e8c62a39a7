import { expect, login, test } from "../src/fixtures.ts";

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

  await page.getByRole("button", { name: "Times in local zone" }).click();
  const toggle = page.getByRole("button", { name: "Times in UTC" });
  await expect(toggle).toHaveAttribute("aria-pressed", "true");
  await expect(page.getByText(/^Calls created from .+ UTC to .+ UTC\./)).toBeVisible();
  // The choice is kept across pages.
  await page.goto("/audit");
  await expect(page.getByRole("button", { name: "Times in UTC" })).toBeVisible();
  await page.getByRole("button", { name: "Times in UTC" }).click();
  await expect(page.getByRole("button", { name: "Times in local zone" })).toBeVisible();
});
