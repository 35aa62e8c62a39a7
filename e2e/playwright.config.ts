import { defineConfig } from "@playwright/test";

/**
 * The dashboard's end-to-end tests: the global setup starts the real stack (PostgreSQL, executor,
 * fake remote, web app). Tests share the fake remote's fault queue, so they run one at a time.
 * Browser: Debian's Chromium only (`apt-get install chromium`); Playwright never downloads one.
 */
export default defineConfig({
  testDir: "tests",
  outputDir: "test-results",
  globalSetup: "./src/global-setup.ts",
  fullyParallel: false,
  workers: 1,
  retries: 0,
  forbidOnly: Boolean(process.env.CI),
  timeout: 90_000,
  expect: { timeout: 15_000 },
  reporter: [["list"], ["html", { outputFolder: "playwright-report", open: "never" }], ["./src/summary-reporter.ts"]],
  use: {
    browserName: "chromium",
    headless: true,
    viewport: { width: 1440, height: 900 },
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
    launchOptions: {
      executablePath: process.env.E2E_CHROMIUM ?? "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  },
});
