import { api, expect, login, Seeder, stack, test } from "../src/fixtures.ts";

const FIVE_MINUTES_MS = 5 * 60_000;

test("the record page links to the trace with its trace id and a time range around the call", async ({ page }) => {
  const { tools } = stack();
  const seeder = new Seeder("trace");
  const rec = await seeder.call(tools.trace, "found", "hang");
  const { record, events } = await api.intent(rec.key);
  expect(record.traceId, "tracing is on in the e2e stack, so records carry a trace id").toMatch(/^[0-9a-f]{32}$/);

  await login(page, "operator", `/intents/${rec.key}`);
  await expect(page.getByRole("heading", { name: tools.trace })).toBeVisible();
  await expect(page.getByTestId("status")).toContainText(/succeeded/i);
  await expect(page.getByTestId("idempotency-key")).toContainText(rec.key);
  await expect(page.getByRole("button", { name: "Copy key" })).toBeVisible();
  await expect(page.getByRole("button", { name: "Re-run probe now" })).toBeVisible();
  // The timeline has the executor's events in order: sent, the UNKNOWN outcome, the probe that found it.
  const timeline = page.getByRole("list", { name: "Timeline" });
  const shown = await timeline.getByTestId("event").evaluateAll((els) => els.map((e) => e.getAttribute("data-type")));
  expect(shown).toEqual(expect.arrayContaining(["sent", "outcome", "probe"]));
  expect(shown).toHaveLength(events.length);

  const link = page.getByRole("link", { name: "Open trace" });
  const href = await link.getAttribute("href");
  expect(href).toBeTruthy();
  const url = new URL(href!);
  expect(url.pathname).toBe(`/trace/${record.traceId}`);
  const start = Number(url.searchParams.get("start"));
  const end = Number(url.searchParams.get("end"));
  const at = record.createdAtEpochMs;
  // {startMicros}/{endMicros}: the call ±5 minutes (a minute's slack either way for how "the call" is anchored).
  expect(start).toBeGreaterThanOrEqual((at - FIVE_MINUTES_MS - 60_000) * 1000);
  expect(start).toBeLessThanOrEqual((at - FIVE_MINUTES_MS + 60_000) * 1000);
  expect(end).toBeGreaterThanOrEqual((record.updatedAtEpochMs + FIVE_MINUTES_MS - 60_000) * 1000);
  expect(end).toBeLessThanOrEqual((record.updatedAtEpochMs + FIVE_MINUTES_MS + 60_000) * 1000);
  // {startMs}/{endMs}: the same range in milliseconds.
  expect(Number(url.searchParams.get("startMs"))).toBe(Math.floor(start / 1000));
  expect(Number(url.searchParams.get("endMs"))).toBe(Math.floor(end / 1000));
});

test("the search box finds a record by idempotency key, by trace id, and a run by its id", async ({ page }) => {
  const { tools } = stack();
  const seeder = new Seeder("search");
  const first = await seeder.call(tools.trace, "succeeded");
  const second = await seeder.call(tools.trace, "absent_resent", "504");
  const { record } = await api.intent(second.key);

  await login(page, "viewer");
  const search = page.getByLabel("Search");

  await search.fill(first.key);
  await search.press("Enter");
  await expect(page).toHaveURL(new RegExp(`/intents/${first.key}$`));
  await expect(page.getByTestId("idempotency-key")).toContainText(first.key);

  await page.getByLabel("Search").fill(record.traceId);
  await page.getByLabel("Search").press("Enter");
  await expect(page).toHaveURL(new RegExp(`/intents/${second.key}$`));
  await expect(page.getByTestId("idempotency-key")).toContainText(second.key);

  await page.getByLabel("Search").fill(seeder.runId);
  await page.getByLabel("Search").press("Enter");
  await expect(page).toHaveURL(new RegExp(`/runs/${seeder.runId}$`));
  const steps = page.getByRole("table", { name: "Steps" });
  await expect(steps).toContainText(first.stepId);
  await expect(steps).toContainText(second.stepId);
});
