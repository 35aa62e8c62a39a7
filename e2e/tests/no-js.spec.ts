import { expect, Seeder, stack, test } from "../src/fixtures.ts";

test.use({ javaScriptEnabled: false });

test("without JavaScript on 127.0.0.1: a protected page → sign-in → back to it, then the search box finds a run and a record", async ({
  page,
}) => {
  const { tools } = stack();
  const rec = await new Seeder("no-js").call(tools.pages, "succeeded");
  expect(new URL(stack().webUrl).hostname).toBe("127.0.0.1");

  await page.goto("/queue");
  await expect(page).toHaveURL(/^http:\/\/127\.0\.0\.1:\d+\/login\?next=%2Fqueue$/);
  await page.getByLabel("API key").fill(stack().keys.operator);
  await page.getByRole("button", { name: "Sign in" }).click();
  // No loop through another host name: the session cookie set on 127.0.0.1 is sent back there.
  await expect(page).toHaveURL(/^http:\/\/127\.0\.0\.1:\d+\/queue$/);

  const search = page.getByRole("searchbox", { name: "Search" });
  await search.fill(rec.runId);
  await search.press("Enter");
  await expect(page).toHaveURL(new RegExp(`/runs/${rec.runId}$`));

  await page.getByRole("searchbox", { name: "Search" }).fill(rec.key);
  await page.getByRole("searchbox", { name: "Search" }).press("Enter");
  await expect(page).toHaveURL(new RegExp(`/intents/${rec.key}$`));
});
