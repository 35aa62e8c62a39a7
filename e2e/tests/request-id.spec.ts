import { expect, login, Seeder, stack, test } from "../src/fixtures.ts";

test("an API error shows the executor's request id — the one on the answer's X-Request-Id", async ({ page }) => {
  const { tools } = stack();
  const rec = await new Seeder("request-id").call(tools.pages, "succeeded");
  // The record page's read goes out with a key intents.get does not take: the real executor's 400.
  const isRecordRead = (url: URL) => url.pathname.startsWith("/api/trpc/") && url.pathname.includes("intents.get");
  await page.route(isRecordRead, async (route) => {
    const url = new URL(route.request().url());
    const procedures = decodeURIComponent(url.pathname.slice("/api/trpc/".length)).split(",");
    const inputs = JSON.parse(url.searchParams.get("input") ?? "{}") as Record<string, Record<string, unknown>>;
    const at = String(procedures.indexOf("intents.get"));
    inputs[at] = { ...inputs[at], bogus: 1 };
    url.searchParams.set("input", JSON.stringify(inputs));
    await route.continue({ url: url.toString() });
  });
  const answered = page.waitForResponse((r) => isRecordRead(new URL(r.url())));
  await login(page, "operator", `/intents/${rec.key}`);
  const answer = await answered;
  // 400, or 207 when the read went in a batch with others that succeeded.
  expect([400, 207]).toContain(answer.status());
  const requestId = await answer.headerValue("x-request-id");
  expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
  const alert = page.getByRole("alert").filter({ hasText: "Could not load the record" });
  await expect(alert).toContainText('unknown key "bogus"; allowed keys: key');
  await expect(alert.getByTestId("request-id")).toHaveText(`Request id: ${requestId}`);
});
