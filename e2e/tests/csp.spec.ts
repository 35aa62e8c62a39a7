/**
 * The dashboard's Content-Security-Policy uses a nonce per request, never `script-src
 * 'unsafe-inline'` (issue 21 §7), in Chromium against the real stack: every page's policy names a
 * fresh nonce; the dashboard's own scripts (Next.js's, carrying it) run; a script injected into a
 * page's HTML without it does not.
 */
import { expect, login, test } from "../src/fixtures.ts";

const scriptSrc = (policy: string | undefined) =>
  (policy ?? "")
    .split(";")
    .map((d) => d.trim())
    .find((d) => d.startsWith("script-src")) ?? "";

test("pages carry a fresh nonce in script-src and no 'unsafe-inline'; API answers allow no inline script", async ({
  page,
}) => {
  const seen = new Set<string>();
  for (const path of ["/login", "/login", "/queue"]) {
    const policy = (await page.request.get(path, { maxRedirects: 0 })).headers()["content-security-policy"];
    const scripts = scriptSrc(policy);
    expect(scripts, path).toMatch(/'nonce-[A-Za-z0-9+/=]{16,}'/);
    expect(scripts, path).not.toContain("'unsafe-inline'");
    expect(policy, path).toContain("frame-ancestors 'none'");
    seen.add(/'nonce-([^']+)'/.exec(scripts)?.[1] ?? "");
  }
  expect(seen.size).toBe(3);
  const api = (await page.request.get("/api/trpc/queue.list?input=%7B%7D")).headers()["content-security-policy"];
  expect(scriptSrc(api)).toBe("script-src 'self'");
});

test("an inline script injected into a page does not run; the dashboard's own scripts do", async ({ page }) => {
  // An injection, as a bug in a page would make it: the page's HTML with an inline script, nonce-less.
  await page.route(/\/login(\?.*)?$/, async (route) => {
    const answer = await route.fetch();
    const html = (await answer.text()).replace("<body>", "<body><script>window.__injected = true;</script>");
    await route.fulfill({ response: answer, body: html });
  });
  const blocked: string[] = [];
  page.on("console", (m) => {
    if (/Content Security Policy/i.test(m.text())) blocked.push(m.text());
  });
  await page.goto("/login");
  // Next.js's scripts carry the nonce: the page hydrates (its router is there).
  await expect.poll(() => page.evaluate(() => typeof (window as { next?: unknown }).next)).toBe("object");
  expect(await page.evaluate(() => (window as { __injected?: boolean }).__injected)).toBeUndefined();
  expect(blocked.join("\n")).toMatch(/script/i);
  // And the dashboard works with JavaScript: signing in still lands on the queue.
  await page.unrouteAll();
  await login(page, "operator", "/queue");
  await expect(page).toHaveURL(/\/queue/);
});
