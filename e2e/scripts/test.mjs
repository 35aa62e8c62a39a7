#!/usr/bin/env node
// `pnpm --filter @tristate/e2e test` (and so `npm test`): builds the web app when its build is missing
// or older than its sources, then runs Playwright with Debian's Chromium. Extra arguments go to
// `playwright test` (e.g. `tests/queue.spec.ts`; not after `--`, which makes Playwright run every spec).
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildWebIfStale } from "../../apps/web/scripts/build-if-stale.mjs";

const e2eDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const root = join(e2eDir, "..");
const webDir = join(root, "apps", "web");
const chromium = process.env.E2E_CHROMIUM ?? "/usr/bin/chromium";

const webPkg = JSON.parse(readFileSync(join(webDir, "package.json"), "utf8"));
if (!webPkg.scripts?.build) {
  console.log("e2e: SKIPPED — apps/web has no `build` script yet, so there is no dashboard to test.");
  process.exit(0);
}
if (!existsSync(chromium)) {
  console.error(
    `e2e: no Chromium at ${chromium}. Install Debian's: apt-get update && apt-get install -y chromium ` +
      "(Playwright never downloads a browser here).",
  );
  process.exit(1);
}

const status = buildWebIfStale({ label: "e2e", force: process.env.E2E_REBUILD === "1" });
if (status !== 0) process.exit(status);

const playwright = join(e2eDir, "node_modules", "@playwright", "test", "cli.js");
const res = spawnSync(process.execPath, [playwright, "test", ...process.argv.slice(2)], {
  cwd: e2eDir,
  stdio: "inherit",
  env: { ...process.env, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: "1" },
});
process.exit(res.status ?? 1);
