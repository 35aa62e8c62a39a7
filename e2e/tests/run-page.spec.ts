import { randomUUID } from "node:crypto";
import type { Page } from "@playwright/test";
import { api, expect, fault, type Json, login, Seeder, screenshot, stack, test } from "../src/fixtures.ts";

/**
 * The run page says what happened to each step (issue 22 §4): done, no effect, waiting for a person,
 * compensated — never "done" for a FAILED_NO_EFFECT or a compensated booking — with the run's state
 * as a badge at the top; the record timeline reads like an event history; at 1280 px nothing of the
 * steps table is hidden.
 */

/** A call of the run page's tool (unsafe, no probes) in `runId`, answered by the fake remote's `answer`. */
async function call(runId: string, stepId: string, answer?: number): Promise<Json> {
  if (answer !== undefined) await fault({ answer, commit: false });
  const { status, json } = await api.post(
    "calls.execute",
    {
      runId,
      stepId,
      tool: stack().tools.runPage,
      args: { order_id: `RP-${stepId}-${randomUUID().slice(0, 8)}`, amount: "12.50", currency: "EUR" },
      budgetMs: 20_000,
    },
    stack().keys.agent,
  );
  expect(status, JSON.stringify(json)).toBe(200);
  return json.result.data;
}

/** The step row of `stepId` in the run page's steps table. */
function stepRow(page: Page, stepId: string) {
  return page
    .getByRole("table", { name: "Steps", exact: true })
    .locator(`[data-testid="step-row"][data-step="${stepId}"]`);
}

/** Fails when the steps table (or the page) scrolls sideways: a column or a warning would be hidden. */
async function expectStepsFit(page: Page) {
  const table = page.getByRole("table", { name: "Steps", exact: true });
  const fit = await table.evaluate((el) => {
    const wrap = el.parentElement as HTMLElement;
    return {
      table: el.scrollWidth,
      wrap: wrap.clientWidth,
      page: document.documentElement.scrollWidth,
      viewport: window.innerWidth,
    };
  });
  expect(fit.table, `the steps table (${fit.table} px) fits its box (${fit.wrap} px)`).toBeLessThanOrEqual(fit.wrap);
  expect(fit.page, "the page does not scroll sideways").toBeLessThanOrEqual(fit.viewport);
}

test("each step says what happened to it, and the run's state is a badge at the top", async ({ page }, testInfo) => {
  const runId = `e2e-run-page-${randomUUID().slice(0, 8)}`;
  const done = await call(runId, "reserve");
  const noEffect = await call(runId, "charge", 400);
  const waiting = await call(runId, "notify", 504);
  expect(done).toMatchObject({ status: "SUCCEEDED" });
  expect(noEffect).toMatchObject({ status: "FAILED_NO_EFFECT" });
  expect(waiting).toMatchObject({ status: "UNKNOWN", resolution: "needs_human" });

  await page.setViewportSize({ width: 1280, height: 900 });
  await login(page, "viewer", `/runs/${runId}`);
  const runState = page.getByTestId("run-state");
  await expect(runState).toHaveAttribute("data-state", "needs_person");
  await expect(runState).toHaveText(/needs a person/);

  const expected = [
    ["reserve", "done", "done"],
    ["charge", "no_effect", "no effect"],
    ["notify", "needs_person", "waiting for a person"],
  ] as const;
  for (const [stepId, state, words] of expected) {
    const badge = stepRow(page, stepId).getByTestId("step-state");
    await expect(badge, stepId).toHaveAttribute("data-state", state);
    await expect(badge, stepId).toHaveText(new RegExp(`${words}$`));
  }
  // Each state has its own colour (the words and the icon say it too).
  const colours = await page
    .getByTestId("step-state")
    .evaluateAll((els) => els.map((e) => getComputedStyle(e).backgroundColor));
  expect(new Set(colours).size).toBe(3);
  await expect(page.getByTestId("run-step-count")).toHaveText(/^3 steps/);
  await expectStepsFit(page);
  await screenshot(page, "run-page-states", testInfo);
});

test("a compensated booking says compensated, its compensation under it and not counted as a step", async ({
  page,
}, testInfo) => {
  const { tools, keys } = stack();
  const seeder = new Seeder("run-page-compensated");
  const booking = await seeder.call(tools.runs, "succeeded");
  const { status, json } = await api.post(
    "runs.operatorAbort",
    { runId: seeder.runId, note: "run page e2e: undo the booking", operatorActionId: randomUUID() },
    keys.operator,
  );
  expect(status, JSON.stringify(json)).toBe(200);
  expect(json.result.data).toMatchObject({ complete: true, undone: 1 });
  const { json: run } = await api.get("runs.get", { runId: seeder.runId });
  expect(run.result.data.records, "the booking and its compensation").toHaveLength(2);

  await page.setViewportSize({ width: 1280, height: 900 });
  await login(page, "viewer", `/runs/${seeder.runId}`);
  await expect(page.getByTestId("run-state")).toHaveAttribute("data-state", "aborted");
  const rows = page.getByRole("table", { name: "Steps", exact: true }).getByTestId("step-row");
  await expect(rows).toHaveCount(1);
  await expect(page.getByTestId("run-step-count")).toHaveText(/^1 step, oldest first; compensations under the step/);
  const row = stepRow(page, booking.stepId);
  await expect(row.getByTestId("step-state")).toHaveAttribute("data-state", "compensated");
  await expect(row.getByTestId("step-state")).toHaveText(/compensated$/);
  await expect(row.getByTestId("step-undo")).toContainText(tools.runsReverse);
  await expect(row.getByTestId("step-undo")).toContainText("SUCCEEDED");
  await expectStepsFit(page);
  await screenshot(page, "run-page-compensated", testInfo);
});

test("the record timeline: one line per event with its offset, send durations, the JSON folded", async ({
  page,
}, testInfo) => {
  const runId = `e2e-run-page-tl-${randomUUID().slice(0, 8)}`;
  const waiting = await call(runId, "notify", 504);
  const { events } = await api.intent(waiting.idempotency_key);
  expect(events.map((e: Json) => e.type)).toEqual(expect.arrayContaining(["created", "sent", "outcome"]));

  await page.setViewportSize({ width: 1280, height: 900 });
  await login(page, "viewer", `/intents/${waiting.idempotency_key}`);
  const timeline = page.getByRole("list", { name: "Timeline" });
  const items = timeline.getByTestId("event");
  await expect(items).toHaveCount(events.length);
  expect(await items.evaluateAll((els) => els.map((e) => e.getAttribute("data-type")))).toEqual(
    events.map((e: Json) => e.type),
  );
  // Each event on one line: its time to the ms, then the offset from the previous one.
  const offsets = await timeline.getByTestId("event-offset").allTextContents();
  expect(offsets[0]).toBe("start");
  for (const [i, text] of offsets.slice(1).entries()) {
    const ms = events[i + 1].atEpochMs - events[i].atEpochMs;
    expect(text, `offset of event ${i + 1}`).toMatch(ms < 1000 ? new RegExp(`^\\+${Math.round(ms)} ms$`) : /^\+\d/);
  }
  for (const time of await timeline.getByTestId("event-time").allTextContents()) {
    expect(time).toMatch(/^\d{2}:\d{2}:\d{2}\.\d{3}$/);
  }
  const lineHeights = await timeline
    .getByTestId("event-line")
    .evaluateAll((els) => els.map((e) => e.getBoundingClientRect().height));
  const oneLine = Math.min(...lineHeights);
  for (const h of lineHeights) expect(h, "an event's line does not wrap").toBeLessThan(oneLine * 1.5);
  // The send's duration (sent → outcome), from the outcome's measured durationMs.
  const outcome = events.find((e: Json) => e.type === "outcome");
  const outcomeItem = timeline.locator('[data-testid="event"][data-type="outcome"]').first();
  await expect(outcomeItem.getByTestId("event-duration")).toHaveText(
    new RegExp(
      `^sent → outcome: ${outcome.data.durationMs < 1000 ? `${Math.round(outcome.data.durationMs)} ms` : "\\d"}`,
    ),
  );
  await expect(outcomeItem).toContainText("UNKNOWN");
  // The JSON is folded under its line, and opens.
  const json = outcomeItem.locator("details");
  await expect(json).not.toHaveAttribute("open");
  await expect(json.locator("pre")).toBeHidden();
  await json.locator("summary").click();
  await expect(json.locator("pre")).toContainText('"outcome": "UNKNOWN"');
  await screenshot(page, "record-timeline", testInfo);
});
