import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Reporter, TestCase, TestResult } from "@playwright/test/reporter";

/**
 * Adds the e2e counts to the root `npm test` summary: writes `e2e.json` with vitest's JSON-report
 * counters into `TRISTATE_TEST_RESULTS_DIR` (set by scripts/bootstrap.mjs), which sums them.
 */
export default class SummaryReporter implements Reporter {
  private readonly outcomes = new Map<string, TestResult["status"]>();

  onTestEnd(test: TestCase, result: TestResult): void {
    this.outcomes.set(test.id, result.status);
  }

  onEnd(): void {
    const dir = process.env.TRISTATE_TEST_RESULTS_DIR;
    if (!dir) return;
    const statuses = [...this.outcomes.values()];
    const count = (...s: TestResult["status"][]) => statuses.filter((x) => s.includes(x)).length;
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "e2e.json"),
      JSON.stringify({
        numPassedTests: count("passed"),
        numFailedTests: count("failed", "timedOut", "interrupted"),
        numPendingTests: count("skipped"),
      }),
    );
  }

  printsToStdio(): boolean {
    return false;
  }
}
