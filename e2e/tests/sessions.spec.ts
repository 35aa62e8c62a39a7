/**
 * Dashboard sessions and the sign-in's hardening (issue 10, "Dashboard sessions"), in Chromium against
 * the real stack: the cookie holds an opaque session id that dies on sign-out and with its key; login
 * CSRF is refused; `next` never leaves the dashboard; CSP/framing/sniffing/referrer headers (HSTS behind
 * https); the no-JS sign-in redirects relative to the address the browser used.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { BrowserContext, Page } from "@playwright/test";
import { api, expect, login, stack, test } from "../src/fixtures.ts";

/** The session cookie of a context (the one httpOnly cookie). */
async function sessionCookie(context: BrowserContext) {
  const cookies = (await context.cookies()).filter((c) => c.httpOnly);
  expect(cookies).toHaveLength(1);
  return cookies[0]!;
}

/** A page of another site, served by Playwright itself (nothing leaves the machine). */
const EVIL = "http://evil.example";

async function serveEvil(page: Page, html = "<p>evil</p>"): Promise<void> {
  await page.route(`${EVIL}/**`, (route) => route.fulfill({ status: 200, contentType: "text/html", body: html }));
}

test("the cookie is an opaque session: not the key, refused after sign-out even if replayed", async ({
  page,
  browser,
}) => {
  const { webUrl, keys } = stack();
  await login(page, "operator", "/queue");
  await expect(page).toHaveURL(/\/queue/);
  const cookie = await sessionCookie(page.context());
  expect(cookie.value).toMatch(/^tss_[A-Za-z0-9_-]{43}$/);
  for (const key of Object.values(keys)) expect(cookie.value).not.toContain(key);
  expect(cookie.sameSite).toBe("Strict");
  expect(cookie.secure).toBe(false); // plain http here; Secure behind https
  expect((await page.request.get("/api/trpc/queue.list?input=%7B%7D")).status()).toBe(200);

  await page.getByRole("button", { name: "Sign out" }).click();
  await expect(page).toHaveURL(/\/login/);

  // The same cookie value, replayed by someone who copied it before the sign-out: dead.
  const replay = await browser.newContext({ baseURL: webUrl });
  try {
    await replay.addCookies([
      { name: cookie.name, value: cookie.value, url: webUrl, httpOnly: true, sameSite: "Strict" },
    ]);
    const again = await replay.newPage();
    await again.goto("/queue");
    await expect(again).toHaveURL(/\/login\?next=%2Fqueue/);
    expect((await again.request.get("/api/trpc/queue.list?input=%7B%7D")).status()).toBe(401);
  } finally {
    await replay.close();
  }
});

test("revoking a key ends its dashboard sessions at once", async ({ page }) => {
  const { keys } = stack();
  const made = await api.post("keys.create", { name: "short-lived operator", role: "operator" }, keys.admin);
  expect(made.status, JSON.stringify(made.json)).toBe(200);
  const { info, secret } = made.json.result.data;

  await page.goto("/login?next=%2Fqueue");
  await page.waitForLoadState("networkidle");
  await page.getByLabel("API key").fill(secret);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).toHaveURL(/\/queue/);
  await expect(page.locator("body")).toContainText("short-lived operator");

  const revoked = await api.post("keys.revoke", { id: info.id }, keys.admin);
  expect(revoked.status).toBe(200);
  expect(revoked.json.result.data.sessionsEnded).toBe(1);
  expect((await page.request.get("/api/trpc/queue.list?input=%7B%7D")).status()).toBe(401);
  // A fresh tab with the same (now dead) cookie: the open tab may itself be navigating to the login page
  // already (its polling got the 401), so reloading it would race that navigation.
  const again = await page.context().newPage();
  await again.goto("/queue");
  await expect(again).toHaveURL(/\/login\?next=%2Fqueue/);
});

test("login CSRF: a cross-site page cannot swap an operator's session for another key", async ({ page }) => {
  const { webUrl, keys, names } = stack();
  await login(page, "operator", "/overview");
  const before = (await sessionCookie(page.context())).value;

  // A page of another site posts the attacker's (viewer) key to the sign-in form path.
  await serveEvil(
    page,
    `<form id="f" method="post" action="${webUrl}/api/session">
       <input name="apiKey" value="${keys.viewer}"><input name="next" value="/overview">
     </form><script>document.getElementById("f").submit()</script>`,
  );
  const answer = page.waitForResponse((r) => r.url() === `${webUrl}/api/session`);
  await page.goto(`${EVIL}/login-csrf`);
  expect((await answer).status()).toBe(403);
  // The JSON path, as a cross-site `fetch` (text/plain needs no preflight) would send it: refused too.
  const json = await page.request.post("/api/session", {
    headers: { "content-type": "text/plain", origin: EVIL, "sec-fetch-site": "cross-site" },
    data: JSON.stringify({ apiKey: keys.viewer }),
  });
  expect(json.status()).toBe(403);
  const noFetchMetadata = await page.request.post("/api/session", {
    headers: { "content-type": "application/x-www-form-urlencoded", origin: EVIL },
    data: `apiKey=${encodeURIComponent(keys.viewer)}`,
    maxRedirects: 0,
  });
  expect(noFetchMetadata.status()).toBe(403);

  // Still the operator's own session.
  expect((await sessionCookie(page.context())).value).toBe(before);
  await page.goto(`${webUrl}/overview`);
  await expect(page.locator("body")).toContainText(names.operator);
  await expect(page.locator("body")).not.toContainText(names.viewer);

  // The cross-site sign-out is refused as well; the dashboard's own sign-out works.
  const signOut = await page.request.delete("/api/session", {
    headers: { origin: EVIL, "sec-fetch-site": "cross-site" },
  });
  expect(signOut.status()).toBe(403);
  expect((await page.request.get("/api/trpc/queue.list?input=%7B%7D")).status()).toBe(200);
});

test("open redirect: a `next` that would leave the dashboard lands on the overview", async ({ page, browser }) => {
  const { webUrl, keys } = stack();
  let leftTheSite = false;
  await page.context().route(`${EVIL}/**`, (route) => {
    leftTheSite = true;
    return route.fulfill({ status: 200, body: "evil" });
  });
  const bad = ["/\\evil.example/x", "/\t/evil.example/x", "//evil.example/x", "/.//evil.example/x", `${EVIL}/x`];
  for (const next of bad) {
    await login(page, "viewer", next);
    const url = new URL(page.url());
    expect(url.origin, `next=${JSON.stringify(next)}`).toBe(webUrl);
    expect(url.pathname).toBe("/overview");
    // Leave the page first: signed out under it, its polling would navigate to /login by itself and
    // race the next goto (net::ERR_ABORTED).
    await page.goto("about:blank");
    await page.context().clearCookies();
  }
  // The raw forms from the review, typed into the address bar as they were.
  for (const raw of ["/login?next=/\\evil.example/x", "/login?next=/%09/evil.example/x"]) {
    await page.goto(raw);
    await page.waitForLoadState("networkidle");
    await page.getByLabel("API key").fill(keys.viewer);
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page).toHaveURL(`${webUrl}/overview`);
    await page.goto("about:blank");
    await page.context().clearCookies();
  }
  // Without JavaScript (the form's own post and 303) too.
  const noJs = await browser.newContext({ baseURL: webUrl, javaScriptEnabled: false });
  try {
    await noJs.route(`${EVIL}/**`, (route) => {
      leftTheSite = true;
      return route.fulfill({ status: 200, body: "evil" });
    });
    const p = await noJs.newPage();
    for (const next of bad) {
      await p.goto(`/login?next=${encodeURIComponent(next)}`);
      await p.getByLabel("API key").fill(keys.viewer);
      await p.getByRole("button", { name: "Sign in" }).click();
      await expect(p).toHaveURL(`${webUrl}/overview`);
      await noJs.clearCookies();
    }
  } finally {
    await noJs.close();
  }
  expect(leftTheSite).toBe(false);
  // A good `next` is kept.
  await login(page, "viewer", "/audit?operator=ana");
  await expect(page).toHaveURL(`${webUrl}/audit?operator=ana`);
});

test("headers: CSP with frame-ancestors 'none', nosniff, Referrer-Policy; HSTS only behind https; no framing", async ({
  page,
}) => {
  const { webUrl } = stack();
  await login(page, "operator", "/queue");
  for (const path of ["/login", "/queue", "/overview", "/api/trpc/queue.list?input=%7B%7D"]) {
    const res = await page.request.get(path);
    const h = res.headers();
    expect(h["content-security-policy"], path).toContain("frame-ancestors 'none'");
    expect(h["content-security-policy"], path).toContain("default-src 'self'");
    expect(h["x-content-type-options"], path).toBe("nosniff");
    expect(h["referrer-policy"], path).toBe("same-origin");
    expect(h["strict-transport-security"], path).toBeUndefined();
  }
  const https = await page.request.get("/login", { headers: { "x-forwarded-proto": "https" } });
  expect(https.headers()["strict-transport-security"]).toMatch(/max-age=\d{7,}/);

  // A same-site page (a real server on another port of the same host) framing the signed-in queue:
  // the browser refuses to show the dashboard in the frame.
  const framer = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end(`<iframe id="f" src="${webUrl}/queue" width="800" height="600"></iframe>`);
  });
  await new Promise<void>((resolve) => framer.listen(0, "127.0.0.1", resolve));
  try {
    const { port } = framer.address() as AddressInfo;
    const framed = page.waitForResponse((r) => r.url() === `${webUrl}/queue`);
    await page.goto(`http://127.0.0.1:${port}/frame`);
    expect((await framed).status()).toBe(200); // served (the session cookie went along), but not shown
    await page.waitForTimeout(1500);
    const frame = page.frames().find((f) => f !== page.mainFrame());
    expect(frame).toBeDefined();
    expect(frame?.url()).not.toBe(`${webUrl}/queue`);
    const shown =
      (await frame!
        .locator("body")
        .textContent()
        .catch(() => "")) ?? "";
    expect(shown).not.toContain("Sign out");
    await expect(page.frameLocator("#f").getByRole("button", { name: "Sign out" })).toHaveCount(0);
  } finally {
    await new Promise<void>((resolve) => framer.close(() => resolve()));
  }
});

test("the no-JS sign-in redirects relative to the address used, and keeps `next`", async ({ browser }) => {
  const { webUrl, keys } = stack();
  for (const base of [webUrl, webUrl.replace("127.0.0.1", "localhost")]) {
    const context = await browser.newContext({ baseURL: base, javaScriptEnabled: false });
    try {
      const page = await context.newPage();
      await page.goto("/login?next=%2Faudit");
      await page.getByLabel("API key").fill("ts_viewer_not-a-real-key-000000000000000000");
      const failed = page.waitForResponse((r) => r.url().endsWith("/api/session"));
      await page.getByRole("button", { name: "Sign in" }).click();
      const answer = await failed;
      expect(answer.status()).toBe(303);
      expect(answer.headers().location).toBe("/login?failed=1&next=%2Faudit");
      await expect(page).toHaveURL(`${base}/login?failed=1&next=%2Faudit`);
      await expect(page.getByRole("alert").filter({ hasText: "could not sign in" })).toBeVisible();

      await page.getByLabel("API key").fill(keys.viewer);
      const signedIn = page.waitForResponse((r) => r.url().endsWith("/api/session"));
      await page.getByRole("button", { name: "Sign in" }).click();
      expect((await signedIn).headers().location).toBe("/audit");
      await expect(page).toHaveURL(`${base}/audit`);
      await expect(page.locator("body")).toContainText(stack().names.viewer);
    } finally {
      await context.close();
    }
  }
});
