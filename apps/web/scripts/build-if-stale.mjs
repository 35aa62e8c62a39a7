// The dashboard's build, made when it is missing or older than the web app's sources: used by
// `pnpm dashboard` (scripts/dashboard.mjs) and the e2e runner, so neither serves a stale build.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The web app's folder (apps/web). */
export const webDir = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Newest modification time (epoch ms) of the web app's sources (not its build or dependencies). */
function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if ([".next", "node_modules", ".turbo"].includes(entry.name) || entry.name.endsWith(".tsbuildinfo")) continue;
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * Builds the web app (`pnpm --filter @tristate/web build`, output shown) when `.next/BUILD_ID` is
 * missing or older than a source, or when `force` is set. `label` prefixes the line saying so.
 * @returns the build's exit status (0 also when no build was needed).
 */
export function buildWebIfStale({ label, force = false }) {
  const buildId = join(webDir, ".next", "BUILD_ID");
  const stale = !existsSync(buildId) || statSync(buildId).mtimeMs < newestSource(webDir);
  if (!stale && !force) return 0;
  console.log(`${label}: building the dashboard (pnpm --filter @tristate/web build)`);
  const build = spawnSync("pnpm", ["--filter", "@tristate/web", "build"], {
    cwd: join(webDir, "..", ".."),
    stdio: "inherit",
  });
  return build.status ?? 1;
}
