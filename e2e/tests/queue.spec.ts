import { randomUUID } from "node:crypto";
import { api, expect, type Json, login, openAction, queueRow, Seeder, stack, test } from "../src/fixtures.ts";

test("an operator resolves a queue item through the confirmation; the record, its timeline and the audit log show it", async ({
  page,
}) => {
  const { tools, names } = stack();
  const seeder = new Seeder("queue-resolve");
  const rec = await seeder.call(tools.queue, "needs_human");
  const note = `PSP shows refund for ${rec.key.slice(0, 8)} (${randomUUID().slice(0, 8)})`;

  await login(page, "operator", "/queue");
  await expect(page).toHaveURL(/\/queue/);
  const dialog = await openAction(page, rec.key, "Confirm it happened");
  await expect(dialog).toContainText(rec.key); // the exact consequence names the key
  await dialog.getByLabel("Reason").fill(note);
  await dialog.getByRole("button", { name: "Confirm", exact: true }).click();
  await expect(dialog).toBeHidden();
  await expect(queueRow(page, rec.key)).toHaveCount(0);

  // What the executor recorded: one human action by ana, with the reason.
  const detail = await api.intent(rec.key);
  expect(detail.record).toMatchObject({ status: "SUCCEEDED", resolution: "human_confirmed_effect", needsHuman: false });
  const actions = detail.events.filter((e: Json) => e.type === "human_action");
  expect(actions).toHaveLength(1);
  expect(actions[0].data).toMatchObject({ action: "confirm_effect", actor: names.operator, note });

  // The record page.
  await page.goto(`/intents/${rec.key}`);
  await expect(page.getByRole("heading", { name: tools.queue })).toBeVisible();
  await expect(page.getByTestId("status")).toContainText(/succeeded/i);
  await expect(page.getByTestId("idempotency-key")).toContainText(rec.key);
  const timeline = page.getByRole("list", { name: "Timeline" });
  const human = timeline.locator('[data-testid="event"][data-type="human_action"]');
  await expect(human).toHaveCount(1);
  await expect(human).toContainText(names.operator);
  await expect(human).toContainText(note);

  // The audit log.
  await page.getByRole("navigation").getByRole("link", { name: "Audit log" }).click();
  await expect(page).toHaveURL(/\/audit/);
  const audit = page.getByRole("table", { name: "Audit log" });
  const entry = audit.getByTestId("audit-row").filter({ hasText: note });
  await expect(entry).toHaveCount(1);
  await expect(entry).toContainText(names.operator);
  for (const label of ["Operator", "Action", "Tool"]) await expect(page.getByLabel(label)).toBeVisible();
  const { json } = await api.get("audit.list", { tool: tools.queue });
  expect(json.result.data.entries.filter((e: Json) => e.key === rec.key)).toHaveLength(1);
});

test("a second operator holding the old version is refused and shown the winner, keeping the typed reason", async ({
  page,
  browser,
  baseURL,
}) => {
  const { tools, names } = stack();
  const seeder = new Seeder("queue-conflict");
  const rec = await seeder.call(tools.conflict, "needs_human");

  // Bo opens the item first and starts typing a reason…
  const boContext = await browser.newContext({ baseURL: baseURL! });
  try {
    const bo = await boContext.newPage();
    await login(bo, "operator2", "/queue");
    const boDialog = await openAction(bo, rec.key, "Confirm it did not happen");
    await expect(boDialog).toContainText(rec.key);
    const boReason = "bo: nothing in the PSP for this order";
    await boDialog.getByLabel("Reason").fill(boReason);

    // …while Ana resolves it.
    await login(page, "operator", "/queue");
    const anaDialog = await openAction(page, rec.key, "Confirm it happened");
    await anaDialog.getByLabel("Reason").fill("ana: refund visible in the PSP");
    await anaDialog.getByRole("button", { name: "Confirm", exact: true }).click();
    await expect(anaDialog).toBeHidden();

    // Bo confirms with the old version: refused, told who won, the reason kept.
    await boDialog.getByRole("button", { name: "Confirm", exact: true }).click();
    const alert = boDialog.getByRole("alert");
    await expect(alert).toContainText(`already resolved by ${names.operator}`);
    await expect(boDialog.getByLabel("Reason")).toHaveValue(boReason);

    const detail = await api.intent(rec.key);
    expect(detail.record).toMatchObject({ status: "SUCCEEDED", resolution: "human_confirmed_effect" });
    expect(detail.events.filter((e: Json) => e.type === "human_action")).toHaveLength(1);
    const { json } = await api.get("audit.list", { tool: tools.conflict });
    expect(json.result.data.entries.map((e: Json) => e.actorName)).toEqual([names.operator]);
  } finally {
    await boContext.close();
  }
});
