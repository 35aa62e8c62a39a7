/**
 * Issue 22 §4, the console an operator trusts: the overview's "needs attention" strip and the Human
 * queue tab's count, a column and a colour for every way an UNKNOWN ended ("other" included), the
 * tables at 1280 × 800 (nothing scrolls sideways, the "timeout too close" warning in view), the
 * outage banner's start and count across navigation, the hidden sign-in key, the runs page's one form.
 * Records are seeded in a fresh tenant per test, read through an admin's tenant filter, so the counts
 * are exactly this test's.
 */
import { randomUUID } from "node:crypto";
import type { Page } from "@playwright/test";
import { api, executorReachable, expect, type Fault, fault, Seeder, stack, test } from "../src/fixtures.ts";

/** A fresh tenant with an agent key of its own. */
async function freshTenant(label: string): Promise<{ tenant: string; agentKey: string }> {
  const tenant = `${label}-${randomUUID().slice(0, 6)}`;
  const { status, json } = await api.post(
    "keys.create",
    { name: `agent-${tenant}`, role: "agent", tenant },
    stack().keys.admin,
  );
  expect(status, JSON.stringify(json)).toBe(200);
  return { tenant, agentKey: json.result.data.secret };
}

/** `intents.get` with the admin key (the records are in a fresh tenant) → `{ record, events }`. */
async function adminIntent(key: string) {
  const { status, json } = await api.get("intents.get", { key }, stack().keys.admin);
  expect(status, JSON.stringify(json)).toBe(200);
  return json.result.data;
}

/** Signs in with the admin key (the tenant filter is an admin's) and opens `next`. */
async function loginAdmin(page: Page, next: string): Promise<void> {
  await page.goto(`/login?next=${encodeURIComponent(next)}`);
  await page.waitForLoadState("networkidle");
  await page.getByLabel("API key").fill(stack().keys.admin);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).not.toHaveURL(/\/login(\?|$)/);
}

/** A duration as the dashboard writes it (`850 ms`, `12.3 s`, `4m 05s`), in ms. */
function parseDuration(text: string): number {
  const ms = /^(\d+) ms$/.exec(text);
  if (ms) return Number(ms[1]);
  const s = /^(\d+(?:\.\d)?) s$/.exec(text);
  if (s) return Number(s[1]) * 1000;
  const m = /^(\d+)m (\d\d)s$/.exec(text);
  if (m) return (Number(m[1]) * 60 + Number(m[2])) * 1000;
  throw new Error(`not a duration: ${text}`);
}

/** Sideways overflow of the scroll box around the table named `name`, px (0: it fits). */
async function overflowOf(page: Page, name: string): Promise<number> {
  const table = page.getByRole("table", { name });
  await expect(table).toBeVisible();
  return table.evaluate((el) => {
    const box = el.closest(".table-wrap") ?? el.parentElement!;
    return Math.max(box.scrollWidth - box.clientWidth, el.getBoundingClientRect().right - window.innerWidth);
  });
}

test.afterEach(async () => {
  await executorReachable(true);
});

test("the attention strip and the queue tab count the records waiting for a person, with the oldest one's age", async ({
  page,
}) => {
  const { tenant, agentKey } = await freshTenant("attn");
  const seeder = new Seeder("attention", agentKey);
  const waiting = await seeder.call(stack().tools.tenants, "needs_human");
  const createdAt = (await adminIntent(waiting.key)).record.createdAtEpochMs as number;

  await loginAdmin(page, `/overview?tenant=${tenant}&range=1h`);
  const strip = page.getByRole("region", { name: "Needs attention" });
  await expect(strip.getByTestId("attention-human")).toContainText("1 record waiting for a person");
  const before = Date.now();
  const age = parseDuration(
    ((await strip.getByTestId("attention-human-age").textContent()) ?? "")
      .replace(/^[\s·]*oldest /, "")
      .replace(/ old$/, "")
      .trim(),
  );
  // The age of this record (the strip refreshes every 10 s: it may lag by one refresh).
  expect(age).toBeGreaterThanOrEqual(0);
  expect(age).toBeLessThanOrEqual(before - createdAt + 1_000);
  expect(age).toBeGreaterThanOrEqual(Math.max(0, before - createdAt - 12_000));
  await expect(strip.getByTestId("attention-stale")).toHaveCount(0);
  const tab = page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: /Human queue/ });
  await expect(tab.getByTestId("queue-count")).toHaveText(/\(?1 waiting\)?/);

  // The strip's link opens the queue (the tenant kept), where the record is.
  await strip.getByRole("link", { name: /waiting for a person/ }).click();
  await expect(page).toHaveURL(new RegExp(`/queue\\?tenant=${tenant}`));
  await expect(page.getByRole("table", { name: "Human queue" }).getByTestId("queue-row")).toHaveCount(1);

  // A second record: the tab's count follows with the live refresh, without a reload.
  await seeder.call(stack().tools.tenants, "needs_human");
  await expect(tab.getByTestId("queue-count")).toHaveText(/\(?2 waiting\)?/, { timeout: 20_000 });

  // A tenant with nothing waiting: no count, and the empty queue does not claim who emptied it.
  const empty = await freshTenant("calm");
  await page.goto(`/queue?tenant=${empty.tenant}`);
  await expect(page.getByText("No record is waiting for a person now.")).toBeVisible();
  await expect(page.locator("main")).not.toContainText("the executor settled");
  await expect(tab.getByTestId("queue-count")).toHaveCount(0);
  await page.goto(`/overview?tenant=${empty.tenant}`);
  await expect(page.getByTestId("attention-none")).toContainText("Nothing waits");
});

test("every way an UNKNOWN ended has its column and colour, 'other' included; at 1280 × 800 the tables fit with the warning in view", async ({
  page,
}) => {
  const { tenant, agentKey } = await freshTenant("mix");
  const seeder = new Seeder("mix", agentKey);
  const tool = stack().tools.tenants;
  // A hang: UNKNOWN after the whole 500 ms timeout (p99 at the timeout: "timeout too close"), for a person.
  await seeder.call(tool, "needs_human", "hang");
  // A keyed tool: the remote declines the charge under the key (a failed item, 402 stored) and the
  // answer is lost (reset): UNKNOWN, then the key probe finds the refusal — FAILED_NO_EFFECT without
  // a resolution ("other").
  const keyed = stack().tools.declined;
  await fault({ commit: true, state: "failed", storedStatus: 402, answer: "reset" } as Fault);
  const refused = await api.post(
    "calls.execute",
    {
      runId: seeder.runId,
      stepId: "declined",
      tool: keyed,
      args: { order_id: `E2E-R-${seeder.runId.slice(-8)}`, amount: "49.90", currency: "EUR" },
      budgetMs: 20_000,
    },
    agentKey,
  );
  expect(refused.status, JSON.stringify(refused.json)).toBe(200);
  expect(refused.json.result.data).toMatchObject({ status: "FAILED_NO_EFFECT", error: { code: "REJECTED" } });
  const after = (await adminIntent(refused.json.result.data.idempotency_key)).record;
  expect(after).toMatchObject({ status: "FAILED_NO_EFFECT", needsHuman: false, resolution: null });

  await page.setViewportSize({ width: 1280, height: 800 });
  await loginAdmin(page, `/overview?tenant=${tenant}&range=1h`);
  const table = page.getByRole("table", { name: "Reliability per tool" });
  for (const header of [
    "Found",
    "Absent → resent",
    "Person: happened",
    "Person: did not",
    "Person: resent",
    "Still open",
    "Other",
  ]) {
    await expect(table.getByRole("columnheader", { name: header, exact: true })).toBeVisible();
  }
  const manualRow = table.getByRole("row").filter({ hasText: tool });
  await expect(manualRow.getByTestId("calls")).toHaveText("1");
  await expect(manualRow.getByTestId("resolution-open")).toHaveText("1");
  const row = table.getByRole("row").filter({ hasText: keyed });
  await expect(row.getByTestId("calls")).toHaveText("1");
  await expect(row.getByTestId("unknown-share")).toHaveText("100.0%");
  await expect(row.getByTestId("resolution-other")).toHaveText("1");
  await expect(row.getByTestId("resolution-absent_resent")).toHaveText("0");
  await expect(row.getByTestId("resolution-found")).toHaveText("0");
  // The row's words agree with its figures: its bar names the category, and never "no UNKNOWN".
  await expect(row.getByRole("img", { name: "Resolution mix: 1 UNKNOWN: other 1" })).toBeVisible();
  await expect(row).not.toContainText("no UNKNOWN");
  // Each category has its own colour (the legend's swatches).
  const colours = await page
    .locator(".bar-legend .swatch")
    .evaluateAll((els) => els.map((el) => getComputedStyle(el).backgroundColor));
  expect(colours).toHaveLength(7);
  expect(new Set(colours).size).toBe(7);

  // 1280 × 800: the overview's table fits, and its last column's warning is on screen.
  expect(await overflowOf(page, "Reliability per tool")).toBeLessThanOrEqual(1);
  // Tool names wrap (after '.' or '_') instead of being cut: each shows whole, nothing hidden.
  for (const [r, name] of [
    [manualRow, tool],
    [row, keyed],
  ] as const) {
    const cell = r.getByTestId("tool-name");
    await expect(cell).toHaveText(name);
    expect(await cell.evaluate((el) => el.scrollWidth - el.clientWidth)).toBeLessThanOrEqual(0);
  }
  const flag = manualRow.getByTestId("timeout-flag");
  await expect(flag).toContainText("timeout too close");
  await flag.scrollIntoViewIfNeeded();
  const box = (await flag.boundingBox())!;
  expect(box.x + box.width).toBeLessThanOrEqual(1280);
  await expect(flag).toBeInViewport();

  // The queue and the runs list of every tenant (tenant column included) fit too.
  await page.goto("/queue");
  expect(await overflowOf(page, "Human queue")).toBeLessThanOrEqual(1);
  await page.goto("/runs");
  expect(await overflowOf(page, "Runs")).toBeLessThanOrEqual(1);
  expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
});

test("the small charts put the worst tool first and say how many calls the busiest slice is", async ({ page }) => {
  const { tenant, agentKey } = await freshTenant("series");
  const seeder = new Seeder("series", agentKey);
  await seeder.call(stack().tools.pages, "succeeded");
  await seeder.call(stack().tools.pages, "succeeded");
  await seeder.call(stack().tools.pages, "succeeded");
  await seeder.call(stack().tools.tenants, "needs_human");
  await loginAdmin(page, `/overview?tenant=${tenant}&range=1h`);
  const charts = page.getByTestId("tool-series");
  await expect(charts).toHaveCount(2);
  // tenants_refund: 100 % UNKNOWN of 1 call, before pages_refund: 0 % of 3.
  await expect(charts.nth(0)).toHaveAttribute("data-tool", stack().tools.tenants);
  await expect(charts.nth(1)).toHaveAttribute("data-tool", stack().tools.pages);
  await expect(charts.nth(1).getByTestId("series-peak")).toContainText(/Busiest slice: [1-3] calls? from/);
});

test("the outage banner keeps its start and its count across navigation", async ({ page }) => {
  await loginAdmin(page, "/overview");
  await executorReachable(false);
  await page.reload();
  const banner = page.getByTestId("outage-banner");
  await expect(banner).toBeVisible();
  const since = Number(await banner.getAttribute("data-since"));
  expect(since).toBeGreaterThan(0);
  const duration = page.getByTestId("outage-duration");
  await expect.poll(async () => parseDuration((await duration.textContent()) ?? "")).toBeGreaterThanOrEqual(2_000);

  // Client-side navigation (the header's links): the same start, the count running on.
  const nav = page.getByRole("navigation", { name: "Main" });
  let last = parseDuration((await duration.textContent()) ?? "");
  for (const name of ["Runs", "Stale PENDING", "Audit log"]) {
    await nav.getByRole("link", { name }).click();
    await expect(page).toHaveURL(new RegExp(`/${name === "Runs" ? "runs" : name === "Audit log" ? "audit" : "stale"}`));
    await expect(banner).toHaveAttribute("data-since", String(since));
    const now = parseDuration((await duration.textContent()) ?? "");
    expect(now, `the count after opening ${name}`).toBeGreaterThanOrEqual(last);
    last = now;
  }
  // A full page load: still the same outage, not a new one from now.
  await page.goto("/queue");
  await expect(banner).toHaveAttribute("data-since", String(since));
  await expect.poll(async () => parseDuration((await duration.textContent()) ?? "")).toBeGreaterThanOrEqual(last);
  expect(Date.now() - since).toBeGreaterThanOrEqual(last);
});

test("the sign-in field hides the key unless asked; the runs page has one filter form", async ({ page }) => {
  await page.goto("/login");
  await page.waitForLoadState("networkidle");
  const field = page.getByLabel("API key");
  await expect(field).toHaveAttribute("type", "password");
  await expect(field).toHaveAttribute("autocomplete", "off");
  await field.fill(stack().keys.viewer);
  await page.getByRole("button", { name: "Show key" }).click();
  await expect(field).toHaveAttribute("type", "text");
  await expect(page.getByRole("button", { name: "Hide key" })).toHaveAttribute("aria-pressed", "true");
  await page.getByRole("button", { name: "Hide key" }).click();
  await expect(field).toHaveAttribute("type", "password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).not.toHaveURL(/\/login(\?|$)/);

  await page.goto("/runs");
  const main = page.locator("main");
  await expect(main.locator("form")).toHaveCount(1);
  const form = page.getByRole("form", { name: "Filter the runs" });
  await form.getByLabel("Time range").selectOption("6h");
  await form.getByLabel("Status").selectOption("completed");
  await expect(form.getByRole("button")).toHaveCount(1);
  await form.getByRole("button", { name: "Apply" }).click();
  await expect(page).toHaveURL(/range=6h/);
  await expect(page).toHaveURL(/status=completed/);

  // The records page too: one form (time range, tool, status, resolution), one Apply.
  await page.goto("/intents");
  await expect(main.locator("form")).toHaveCount(1);
  const records = page.getByRole("form", { name: "Filter the records" });
  await expect(records.getByRole("button")).toHaveCount(1);
  await records.getByLabel("Time range").selectOption("1h");
  await records.getByLabel("Status").selectOption("SUCCEEDED");
  await records.getByLabel("Resolution").selectOption("found");
  await records.getByRole("button", { name: "Apply" }).click();
  await expect(page).toHaveURL(/range=1h/);
  await expect(page).toHaveURL(/status=SUCCEEDED/);
  await expect(page).toHaveURL(/resolution=found/);
  // The chosen filters stay in the form, and the URL raises no parameter problem.
  await expect(records.getByLabel("Time range")).toHaveValue("1h");
  await expect(records.getByLabel("Status")).toHaveValue("SUCCEEDED");
  await expect(page.getByText("is not a parameter")).toHaveCount(0);
  await expect(page.getByText(/must be one of/)).toHaveCount(0);
});
