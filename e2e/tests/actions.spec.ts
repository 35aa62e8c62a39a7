import { randomUUID } from "node:crypto";
import { api, expect, type Json, login, queueRow, Seeder, screenshot, stack, test } from "../src/fixtures.ts";

test("the record page offers the queue's actions with the same confirmation when the record waits for a person", async ({
  page,
}, testInfo) => {
  const { tools, names } = stack();
  const rec = await new Seeder("record-actions").call(tools.record, "needs_human");
  const note = `nothing at the PSP for ${rec.key.slice(0, 8)} (${randomUUID().slice(0, 8)})`;

  await login(page, "operator", `/intents/${rec.key}`);
  const actions = page.getByRole("region", { name: "Queue actions" });
  await expect(actions).toBeVisible();
  // A queued record is re-checked by nobody but a person: no date a century ahead.
  await expect(page.getByTestId("recheck")).not.toContainText(String(new Date().getFullYear() + 100));
  // This tool has no probe: no "Re-run probe now".
  await expect(page.getByRole("button", { name: "Re-run probe now" })).toHaveCount(0);
  // The timeline shows …EpochMs fields as times with their zone, the raw number only in a title.
  const events = page.getByTestId("event");
  await expect(events.first()).toBeVisible();
  const eventData = (await events.locator("pre").allInnerTexts()).join("\n");
  expect(eventData).not.toMatch(/EpochMs": \d{12,}/);
  for (const title of await events.locator("pre time").evaluateAll((ts) => ts.map((t) => t.getAttribute("title"))))
    expect(title).toMatch(/^\d+$/);
  // Nor a compensation: "Compensate" says the tool declares none (not "settle this one first").
  const compensate = actions.getByRole("button", { name: "Compensate" });
  await expect(compensate).toBeDisabled();
  await expect(compensate).toHaveAttribute("title", /declares no compensation/);

  await actions.getByRole("button", { name: "Confirm it did not happen" }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog).toContainText(rec.key);
  await dialog.getByLabel("Reason").fill(note);
  await screenshot(page, "record-actions", testInfo, true);
  await dialog.getByRole("button", { name: "Confirm", exact: true }).click();
  await expect(dialog).toBeHidden();
  await expect(page.getByTestId("status")).toContainText(/FAILED_NO_EFFECT/);
  await expect(actions).toBeHidden();

  const detail = await api.intent(rec.key);
  expect(detail.record).toMatchObject({ status: "FAILED_NO_EFFECT", needsHuman: false });
  const human = detail.events.filter((e: Json) => e.type === "human_action");
  expect(human).toHaveLength(1);
  expect(human[0].data).toMatchObject({ action: "confirm_no_effect", actor: names.operator, note });
});

test("the record page, when someone else settled the record meanwhile, names who did with the request id and refetches the record", async ({
  page,
}) => {
  const { tools, names } = stack();
  const seeder = new Seeder("record-actions-conflict");
  const rec = await seeder.call(tools.record, "needs_human");

  await login(page, "operator2", `/intents/${rec.key}`);
  const actions = page.getByRole("region", { name: "Queue actions" });
  await actions.getByRole("button", { name: "Confirm it did not happen" }).click();
  const dialog = page.getByRole("dialog");
  const reason = "bo: nothing in the PSP for this order";
  await dialog.getByLabel("Reason").fill(reason);

  // Someone else settles it through the API while the dialog is open (the page holds the old version).
  await seeder.resolve(rec.key, "confirm_effect", "ana: refund visible in the PSP");
  await dialog.getByRole("button", { name: "Confirm", exact: true }).click();

  const alert = dialog.getByRole("alert");
  await expect(alert).toContainText(`already resolved by ${names.operator}`);
  await expect(alert.getByTestId("request-id")).toContainText(/Request id: \S+/);
  await expect(dialog.getByLabel("Reason")).toHaveValue(reason);
  // Behind the dialog the record is read again: the settled status, no actions offered.
  await expect(page.getByTestId("status")).toContainText(/SUCCEEDED/);
  await dialog.getByRole("button", { name: "Cancel" }).click();
  await expect(dialog).toBeHidden();
  await expect(actions).toBeHidden();
  await expect(page.getByRole("region", { name: "Record" })).not.toContainText("waiting for a person");
  const detail = await api.intent(rec.key);
  expect(detail.record).toMatchObject({ status: "SUCCEEDED", needsHuman: false });
  expect(detail.events.filter((e: Json) => e.type === "human_action")).toHaveLength(1);
});

test("an operator aborts a run from the run page and reads the abort report", async ({ page }, testInfo) => {
  const { tools, names } = stack();
  const seeder = new Seeder("run-abort");
  const first = await seeder.call(tools.runs, "succeeded");
  const second = await seeder.call(tools.runs, "succeeded");

  await login(page, "operator", `/runs/${seeder.runId}`);
  await expect(page.getByRole("table", { name: "Steps", exact: true })).toBeVisible();
  // Every step has settled: the abort undoes them, and says so.
  await page.getByRole("button", { name: "Undo run…" }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog.getByRole("heading")).toHaveText(`Undo run ${seeder.runId}?`);
  await dialog.getByLabel("Reason").fill("customer cancelled the whole order");
  await dialog.getByRole("button", { name: "Confirm abort" }).click();
  await expect(dialog).toBeHidden();
  const report = page.getByTestId("abort-report");
  await expect(report).toContainText("Complete");
  const steps = report.getByTestId("abort-step");
  await expect(steps).toHaveCount(2);
  await expect(report.locator('[data-outcome="compensated"]')).toHaveCount(2);
  // Worded for the operator (issue 14), the agent's instructions only behind "What the agent is told".
  await expect(report.getByTestId("abort-summary")).toHaveText(
    /^Reversed: 2 steps \(.+\)\. Nothing failed\. Nothing needs a person\.$/,
  );
  await expect(report.getByTestId("abort-summary")).not.toContainText("tell the user");
  await expect(report).not.toContainText("step(s)");
  // The agent's wording is titled for an operator and stays collapsed.
  const agentWording = report.locator("details").filter({ hasText: "The summary an agent would read" });
  await expect(agentWording).toHaveCount(1);
  await expect(agentWording).not.toHaveAttribute("open");
  await expect(report).not.toContainText("What the agent is told");
  // Nothing is left to undo: "Abort run" is no longer offered, here and after a reload.
  await expect(page.getByRole("button", { name: "Abort run" })).toBeDisabled();
  await expect(page.getByTestId("abort-unavailable")).toContainText("nothing is left to undo");
  // The compensations are steps of the run now, shown with the originals.
  await expect(page.getByRole("table", { name: "Steps", exact: true })).toContainText(tools.runsReverse);
  await screenshot(page, "run-abort", testInfo, true);
  await expect(report.getByTestId("abort-counts")).toContainText("Undone: 2");
  await page.reload();
  await expect(page.getByRole("table", { name: "Steps", exact: true })).toContainText(tools.runsReverse);
  await expect(page.getByRole("button", { name: "Abort run" })).toBeDisabled();
  // The abort is a state of the run (rule 13): who, when, why, and its steps by where they stand.
  const aborted = page.getByRole("region", { name: "Run aborted" });
  await expect(aborted).toHaveAttribute("data-complete", "true");
  await expect(aborted.getByTestId("run-aborted-by")).toHaveText(names.operator);
  await expect(aborted.getByTestId("run-aborted-reason")).toHaveText("customer cancelled the whole order");
  await expect(aborted.getByTestId("abort-undone")).toHaveAttribute("data-count", "2");
  await expect(aborted.getByTestId("abort-in-flight")).toHaveAttribute("data-count", "0");
  await expect(aborted.getByTestId("abort-waiting-person")).toHaveAttribute("data-count", "0");
  await expect(aborted.getByTestId("run-aborted-state")).toContainText("Complete");

  const { json } = await api.get("runs.get", { runId: seeder.runId });
  const records = json.result.data.records as Json[];
  expect(records.filter((r) => r.tool === tools.runsReverse && r.status === "SUCCEEDED")).toHaveLength(2);
  expect(records.map((r) => r.key)).toEqual(expect.arrayContaining([first.key, second.key]));

  // The runs page lists it as aborted, with its tools, and its status filter finds it.
  await page.goto("/runs?status=aborted");
  const listed = page.locator(`[data-testid="run-row"][data-run="${seeder.runId}"]`);
  await expect(listed).toHaveCount(1);
  await expect(listed.getByTestId("run-status")).toHaveText("aborted");
  await expect(listed).toContainText(tools.runsReverse);
  await expect(listed.getByTestId("run-unknowns")).toHaveText("0");
  await page.goto("/runs?status=open");
  await expect(page.locator(`[data-testid="run-row"][data-run="${seeder.runId}"]`)).toHaveCount(0);
  await page.goto(`/runs?tool=${tools.runsReverse}`);
  await expect(page.locator(`[data-testid="run-row"][data-run="${seeder.runId}"]`)).toHaveCount(1);

  // The audit log shows the abort: who, which run, why, and the report's summary.
  await page.goto("/audit?action=abort_run");
  const entry = page.getByTestId("audit-row").filter({ hasText: seeder.runId });
  await expect(entry).toHaveCount(1);
  await expect(entry).toContainText("Abort run");
  await expect(entry).toContainText(names.operator);
  await expect(entry).toContainText("customer cancelled the whole order");
  await expect(entry).toContainText("Reversed: 2 steps");
  await expect(entry).not.toContainText("tell the user");

  // A viewer sees the run but not the button.
  const viewer = await page.context().browser()!.newContext({ baseURL: stack().webUrl });
  const vpage = await viewer.newPage();
  await login(vpage, "viewer", `/runs/${seeder.runId}`);
  await expect(vpage.getByRole("table", { name: "Steps", exact: true })).toBeVisible();
  await expect(vpage.getByRole("button", { name: /^(Abort|Undo) run/ })).toHaveCount(0);
  await expect(vpage.getByRole("region", { name: "Run aborted" }).getByTestId("run-aborted-by")).toHaveText(
    names.operator,
  );
  await viewer.close();
});

test("bulk resolution: several queue records, each compare-and-set with its own reason", async ({ page }, testInfo) => {
  const { tools, names } = stack();
  const seeder = new Seeder("bulk");
  const recs = [
    await seeder.call(tools.bulk, "needs_human"),
    await seeder.call(tools.bulk, "needs_human"),
    await seeder.call(tools.bulk, "needs_human"),
  ];
  await login(page, "operator", "/queue");
  for (const rec of recs) {
    await queueRow(page, rec.key).getByRole("checkbox").check();
  }
  await expect(page.getByText("3 of")).toBeVisible();
  await page.getByRole("button", { name: "Settle the checked: it did not happen" }).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog.getByTestId("bulk-item")).toHaveCount(3);
  await expect(dialog.getByRole("heading", { level: 2 })).toHaveText(/ for 3 records\?$/);
  const shared = `bulk: nothing at the PSP (${randomUUID().slice(0, 8)})`;
  const own = `this one was checked by phone (${randomUUID().slice(0, 8)})`;
  await dialog.locator(`[data-key="${recs[0]!.key}"] textarea`).fill(shared);
  await dialog.getByRole("button", { name: "Use this reason where none is given" }).click();
  await dialog.locator(`[data-key="${recs[2]!.key}"] textarea`).fill(own);
  await screenshot(page, "queue-bulk", testInfo, true);

  // Meanwhile another operator settles the second record: its compare-and-set must fail, the others pass.
  await seeder.resolve(recs[1]!.key, "confirm_effect", "bo saw it at the PSP", stack().keys.operator2);
  await dialog.getByRole("button", { name: "Confirm 3" }).click();
  await expect(dialog.getByTestId("bulk-outcome")).toHaveCount(3);
  await expect(dialog.locator(`[data-key="${recs[1]!.key}"]`)).toContainText(`Already resolved by ${names.operator2}`);
  await dialog.getByRole("button", { name: "Close" }).click();
  for (const rec of recs) await expect(queueRow(page, rec.key)).toHaveCount(0);

  const notes = [shared, null, own];
  for (const [i, rec] of recs.entries()) {
    const detail = await api.intent(rec.key);
    const human = detail.events.filter((e: Json) => e.type === "human_action");
    expect(human).toHaveLength(1);
    if (i === 1) {
      expect(human[0].data).toMatchObject({ action: "confirm_effect", actor: names.operator2 });
      expect(detail.record.status).toBe("SUCCEEDED");
    } else {
      expect(human[0].data).toMatchObject({ action: "confirm_no_effect", actor: names.operator, note: notes[i] });
      expect(detail.record.status).toBe("FAILED_NO_EFFECT");
    }
  }
});
