import { randomUUID } from "node:crypto";
import {
  api,
  expect,
  expectNoSeriousA11yViolations,
  type Json,
  login,
  screenshot,
  stack,
  test,
} from "../src/fixtures.ts";

/** The fake remote's counters (the stack's control server). */
async function remoteCounters(): Promise<{ posts: number; effects: number }> {
  const res = await fetch(`${stack().controlUrl}/remote`);
  return (await res.json()) as { posts: number; effects: number };
}

test("the confirm page shows what a token confirms before issuing it; the token pays only the arguments shown (issue 20 §2)", async ({
  page,
}, testInfo) => {
  const { tools, keys } = stack();
  const runId = `e2e-confirm-${randomUUID().slice(0, 8)}`;
  const shown = { order_id: "P-7", amount: "5000.00", currency: "EUR", reason: "payout to DE89370400440532010001" };

  await login(page, "operator", "/confirm");
  await expect(page.getByRole("heading", { name: "Confirm a call" })).toBeVisible();
  const form = page.getByRole("form", { name: "Call to confirm" });
  await form.getByLabel("Tool").selectOption(tools.confirm);
  await form.getByLabel("Run id").fill(runId);
  await form.getByLabel("Step id").fill("payout");
  await form.getByLabel("Arguments (JSON)").fill(JSON.stringify({ ...shown, amount: 5000 }));
  await form.getByRole("button", { name: "Review" }).click();

  // Before issuing: the call and every argument the token binds, the secret one masked.
  const dialog = page.getByRole("dialog");
  await expect(dialog).toBeVisible();
  const rows = dialog.getByRole("table", { name: "Arguments confirmed" });
  await expect(rows.locator('[data-arg="amount"] td').nth(1)).toHaveText("5000");
  await expect(rows.locator('[data-arg="order_id"] td').nth(1)).toHaveText("P-7");
  await expect(rows.locator('[data-arg="reason"] td').nth(1)).toHaveText("***0001");
  await expect(dialog).not.toContainText("DE89370400440532010001");
  await expect(dialog).toContainText(runId);
  await expectNoSeriousA11yViolations(page, "confirm-dialog", testInfo);
  await screenshot(page, "confirm-dialog", testInfo, true);
  await dialog.getByRole("button", { name: "Issue token" }).click();
  await expect(dialog).toBeHidden();
  const issued = page.getByRole("region", { name: "Confirmation token" });
  await expect(issued).toBeVisible();
  const token = ((await issued.getByTestId("confirmation-token").textContent()) ?? "").trim();
  expect(token).toMatch(/^ct2\./);
  await expect(issued.locator('[data-arg="reason"] td').nth(1)).toHaveText("***0001");

  // The agent's call with another value of a non-identity argument is refused, naming it; nothing is sent.
  const before = await remoteCounters();
  const call = { runId, stepId: "payout", tool: tools.confirm, budgetMs: 20_000, confirmationToken: token };
  const diverted = await api.post(
    "calls.execute",
    { ...call, args: { ...shown, reason: "payout to DE89370400440532019999" } },
    keys.agent,
  );
  const refused: Json = diverted.json.result.data;
  expect(refused).toMatchObject({
    status: "FAILED_NO_EFFECT",
    error: { code: "CONFIRMATION_REQUIRED", field: "args.reason" },
  });
  expect(JSON.stringify(refused)).not.toMatch(/9999|0001/);
  expect(await remoteCounters()).toEqual(expect.objectContaining({ posts: before.posts, effects: before.effects }));

  // The call shown (keys in another order) is sent once.
  const reordered = { reason: shown.reason, currency: "EUR", amount: "5000.00", order_id: "P-7" };
  const ok = await api.post("calls.execute", { ...call, args: reordered }, keys.agent);
  expect(ok.json.result.data).toMatchObject({ status: "SUCCEEDED" });
  expect((await remoteCounters()).effects).toBe(before.effects + 1);
});

test("viewers cannot confirm calls: the page says so and the API answers 403", async ({ page }) => {
  await login(page, "viewer", "/confirm");
  await expect(page.getByText("Only operators confirm calls.")).toBeVisible();
  await expect(page.getByRole("form", { name: "Call to confirm" })).toHaveCount(0);
  const { tools, keys } = stack();
  const res = await api.get(
    "confirmations.preview",
    { runId: "r", stepId: "s", tool: tools.confirm, args: { order_id: "P-7", amount: "5000.00" } },
    keys.viewer,
  );
  expect(res.status).toBe(403);
});
