#!/usr/bin/env node
// `pnpm --filter @tristate/e2e test` (and so `npm test`): builds the web app when its build is missing
// or older than its sources, then runs Playwright with Debian's Chromium. Extra arguments go to
// `playwright test` (e.g. `-- tests/queue.spec.ts`).
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

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

/** Newest modification time (ms) of the web app's sources (not its build or dependencies). */
function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if ([".next", "node_modules", ".turbo"].includes(entry.name) || entry.name.endsWith(".tsbuildinfo")) continue;
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

const buildId = join(webDir, ".next", "BUILD_ID");
const stale = !existsSync(buildId) || statSync(buildId).mtimeMs < newestSource(webDir);
if (stale || process.env.E2E_REBUILD === "1") {
  console.log("e2e: building the web app (pnpm --filter @tristate/web build)");
  const build = spawnSync("pnpm", ["--filter", "@tristate/web", "build"], { cwd: root, stdio: "inherit" });
  if (build.status !== 0) process.exit(build.status ?? 1);
}

const playwright = join(e2eDir, "node_modules", "@playwright", "test", "cli.js");
const res = spawnSync(process.execPath, [playwright, "test", ...process.argv.slice(2)], {
  cwd: e2eDir,
  stdio: "inherit",
  env: { ...process.env, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: "1" },
});
process.exit(res.status ?? 1);
