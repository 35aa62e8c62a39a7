import { randomUUID } from "node:crypto";
import { copyFile, mkdir } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { test as base, expect, type Locator, type Page, type TestInfo } from "@playwright/test";
import type { StackInfo } from "./stack-info.ts";

const require = createRequire(import.meta.url);
const e2eDir = join(dirname(fileURLToPath(import.meta.url)), "..");
/** Screenshots of each page, written by the tests (also attached to the test's report). */
export const SCREENSHOTS_DIR = join(e2eDir, "screenshots");
/** The screenshots shown in docs/dashboard.md (refreshed only with `E2E_UPDATE_DOCS_SCREENSHOTS=1`). */
export const DOCS_SCREENSHOTS_DIR = join(e2eDir, "..", "docs", "screenshots");

// biome-ignore lint/suspicious/noExplicitAny: JSON answers of the executor API, walked by the tests
export type Json = any;

/** The running stack (started by the global setup). */
export function stack(): StackInfo {
  const raw = process.env.E2E_STACK;
  if (!raw) throw new Error("E2E_STACK is not set: run the tests with `pnpm --filter @tristate/e2e test`");
  return JSON.parse(raw) as StackInfo;
}

export type Role = "viewer" | "operator" | "operator2";

/** The executor's HTTP API, as an agent or a script would call it. */
export const api = {
  async post(path: string, body: unknown, key: string): Promise<{ status: number; json: Json }> {
    const res = await fetch(`${stack().executorUrl}/trpc/${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: await res.json() };
  },
  async get(path: string, input: unknown, key: string = stack().keys.viewer): Promise<{ status: number; json: Json }> {
    const q = input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`;
    const res = await fetch(`${stack().executorUrl}/trpc/${path}${q}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    return { status: res.status, json: await res.json() };
  },
  /** `intents.get` → `{ record, events }`. */
  async intent(key: string): Promise<Json> {
    const { status, json } = await api.get("intents.get", { key });
    expect(status, JSON.stringify(json)).toBe(200);
    return json.result.data;
  },
};

/** What the fake remote does with the next POSTs (see `Fault` in `@tristate/executor/demo-remotes`). */
export interface Fault {
  answer?: "respond" | "hang" | "reset" | number;
  commit?: boolean;
}

/** Queues faults on the stack's fake remote. */
export async function fault(...faults: Fault[]): Promise<void> {
  const res = await fetch(`${stack().controlUrl}/fault`, { method: "POST", body: JSON.stringify(faults) });
  expect(res.status).toBe(200);
}

/** Cuts the web app off from the executor (`false`) or reconnects it (`true`); the tests' own API calls are unaffected. */
export async function executorReachable(reachable: boolean): Promise<void> {
  const res = await fetch(`${stack().controlUrl}/executor`, { method: "POST", body: JSON.stringify({ reachable }) });
  expect(res.status).toBe(200);
}

/** What a seeded call should end as. */
export type Scenario =
  /** No fault: SUCCEEDED on the first send. */
  | "succeeded"
  /** The remote does it but the answer is lost (504 / hang / reset): keyed tools find it by probe. */
  | "found"
  /** The remote does nothing and the answer is ambiguous: keyed tools probe "absent" and resend once. */
  | "absent_resent"
  /** Ambiguous answer on an unsafe tool without probes: UNKNOWN, waiting in the human queue. */
  | "needs_human";

/** A record seeded through the executor API. */
export interface Seeded {
  key: string;
  runId: string;
  stepId: string;
  tool: string;
  envelope: Json;
}

/**
 * Seeds calls through `calls.execute` with the agent key, one run per test (unique run ids), with
 * faults injected on the fake remote. The stack runs tests one at a time, so the queued faults are
 * consumed by this test's calls.
 */
export class Seeder {
  readonly runId: string;
  private step = 0;
  /** `agentKey`: the agent key the calls are made with (its tenant owns the records); default the stack's. */
  constructor(
    label: string,
    private readonly agentKey: string = stack().keys.agent,
  ) {
    this.runId = `e2e-${label.replace(/[^A-Za-z0-9_-]+/g, "-").slice(0, 40)}-${randomUUID().slice(0, 8)}`;
  }

  async call(
    tool: string,
    scenario: Scenario,
    how: "504" | "hang" | "reset" = "504",
    args: Record<string, unknown> = {},
  ): Promise<Seeded> {
    const answer = how === "504" ? 504 : how;
    if (scenario === "found") await fault({ answer, commit: true });
    if (scenario === "absent_resent" || scenario === "needs_human") await fault({ answer, commit: false });
    const stepId = `step-${++this.step}`;
    const { status, json } = await api.post(
      "calls.execute",
      {
        runId: this.runId,
        stepId,
        tool,
        args: { order_id: `E2E-${this.step}-${this.runId.slice(-8)}`, amount: "49.90", currency: "EUR", ...args },
        budgetMs: 20_000,
      },
      this.agentKey,
    );
    expect(status, JSON.stringify(json)).toBe(200);
    const envelope = json.result.data;
    const expected: Record<Scenario, Record<string, unknown>> = {
      succeeded: { status: "SUCCEEDED", replayed: false },
      found: { status: "SUCCEEDED", resolution: "found" },
      absent_resent: { status: "SUCCEEDED", resolution: "absent_resent" },
      needs_human: { status: "UNKNOWN", resolution: "needs_human" },
    };
    expect(envelope, `seeding ${scenario} on ${tool}`).toMatchObject(expected[scenario]);
    return { key: envelope.idempotency_key, runId: this.runId, stepId, tool, envelope };
  }

  /** Resolves a queued record through the executor API (as an operator), not through the UI. */
  async resolve(
    key: string,
    action: "confirm_effect" | "confirm_no_effect",
    note: string,
    operatorKey = stack().keys.operator,
  ): Promise<Json> {
    const { record } = await api.intent(key);
    const { status, json } = await api.post(
      "queue.resolve",
      { key, action, note, expectedVersion: record.version, operatorActionId: randomUUID() },
      operatorKey,
    );
    expect(status, JSON.stringify(json)).toBe(200);
    return json.result.data;
  }
}

/** Signs in through the login page with the role's key; lands on `next` (default: the overview). */
export async function login(page: Page, role: Role, next?: string): Promise<void> {
  await page.goto(next ? `/login?next=${encodeURIComponent(next)}` : "/login");
  await page.waitForLoadState("networkidle"); // hydrated: the form posts the key, not a native GET
  await page.getByLabel("API key").fill(stack().keys[role]);
  await page.getByRole("button", { name: "Sign in" }).click();
  await expect(page).not.toHaveURL(/\/login(\?|$)/);
}

/** The queue's row for a record. */
export function queueRow(page: Page, key: string): Locator {
  return page.getByRole("table", { name: "Human queue" }).locator(`[data-testid="queue-row"][data-key="${key}"]`);
}

/** The four resolution actions, as the queue's buttons are named. */
export const ACTIONS = [
  "Confirm it happened",
  "Confirm it did not happen",
  "Resend with the same key",
  "Compensate",
] as const;

/**
 * Selects a record's queue row and clicks one of its action buttons (in the row, or the toolbar of
 * the selected row); returns the confirmation dialog.
 */
export async function openAction(page: Page, key: string, action: (typeof ACTIONS)[number]): Promise<Locator> {
  const row = queueRow(page, key);
  await expect(row).toBeVisible();
  await row.click();
  const button = page.getByRole("button", { name: action });
  await expect(button.first()).toBeVisible();
  const inRow = row.getByRole("button", { name: action });
  await ((await inRow.count()) > 0 ? inRow : button).click();
  const dialog = page.getByRole("dialog");
  await expect(dialog).toBeVisible();
  return dialog;
}

/** `/overview` scoped to a window around a test's own calls. */
export function overviewUrl(fromEpochMs: number, toEpochMs: number): string {
  return `/overview?from=${Math.floor(fromEpochMs)}&to=${Math.ceil(toEpochMs)}`;
}

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  helpUrl: string;
  nodes: { target: unknown[]; failureSummary?: string }[];
}

/**
 * Runs axe-core (injected from the `axe-core` package) on the page and fails on any violation of
 * impact serious or critical, listing them. Returns every violation (for the report).
 */
export async function expectNoSeriousA11yViolations(page: Page, name: string, testInfo: TestInfo): Promise<void> {
  await page.addScriptTag({ path: require.resolve("axe-core/axe.min.js") });
  const violations = await page.evaluate(async () => {
    // biome-ignore lint/suspicious/noExplicitAny: axe is a global injected by the script tag
    const axe = (window as any).axe;
    const result = await axe.run(document, { resultTypes: ["violations"] });
    return result.violations as unknown;
  });
  const all = violations as AxeViolation[];
  await testInfo.attach(`axe-${name}.json`, { body: JSON.stringify(all, null, 2), contentType: "application/json" });
  const serious = all.filter((v) => v.impact === "serious" || v.impact === "critical");
  const describe = serious.map(
    (v) =>
      `${v.impact} ${v.id}: ${v.help} (${v.helpUrl})\n${v.nodes
        .slice(0, 5)
        .map(
          (n) =>
            `    at ${JSON.stringify(n.target)}${n.failureSummary ? `: ${n.failureSummary.replace(/\n/g, " ")}` : ""}`,
        )
        .join("\n")}`,
  );
  expect(serious, `axe on ${name}:\n${describe.join("\n")}`).toEqual([]);
}

/**
 * Writes a full-page screenshot to `e2e/screenshots/<name>.png` and attaches it to the test; with
 * `E2E_UPDATE_DOCS_SCREENSHOTS=1`, copies it to `docs/screenshots/<name>.png` when `docs` is set.
 */
export async function screenshot(page: Page, name: string, testInfo: TestInfo, docs = false): Promise<string> {
  await mkdir(SCREENSHOTS_DIR, { recursive: true });
  const path = join(SCREENSHOTS_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true, animations: "disabled" });
  await testInfo.attach(`screenshot-${name}`, { path, contentType: "image/png" });
  if (docs && process.env.E2E_UPDATE_DOCS_SCREENSHOTS === "1") {
    await mkdir(DOCS_SCREENSHOTS_DIR, { recursive: true });
    await copyFile(path, join(DOCS_SCREENSHOTS_DIR, `${name}.png`));
  }
  return path;
}

/** Playwright's `test`, with `baseURL` pointing at the stack's web app. */
export const test = base.extend({
  // biome-ignore lint/correctness/noEmptyPattern: Playwright reads a fixture's dependencies from this pattern
  baseURL: async ({}, use) => {
    await use(stack().webUrl);
  },
});

export { expect };
