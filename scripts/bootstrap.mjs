#!/usr/bin/env node
// The README's two commands land here: `npm start` and `npm test`. On a machine with only Node 20
// and npm, this installs pnpm (the version pinned in package.json's packageManager) and the
// workspace's dependencies, then runs the main job or every test.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const pnpmSpec = pkg.packageManager; // e.g. "pnpm@12.4.2"
const mode = process.argv[2];

function run(cmd, args, extraEnv = {}) {
  const res = spawnSync(cmd, args, { cwd: root, stdio: "inherit", env: { ...process.env, ...extraEnv } });
  if (res.error) throw res.error;
  if (res.status !== 0) process.exit(res.status ?? 1);
}

function pnpm(args, extraEnv) {
  const probe = spawnSync("pnpm", ["--version"], { encoding: "utf8" });
  if (probe.status === 0 && `pnpm@${probe.stdout.trim()}` === pnpmSpec) return run("pnpm", args, extraEnv);
  return run("npx", ["--yes", pnpmSpec, ...args], extraEnv);
}

pnpm(["install", "--frozen-lockfile"]);
switch (mode) {
  case "start":
    pnpm(["--filter", "@tristate/executor", "run", "start"]);
    break;
  case "test":
    pnpm(["run", "lint"]);
    pnpm(["run", "typecheck"]);
    pnpm(["-r", "--workspace-concurrency=1", "run", "test"]);
    break;
  default:
    console.error("usage: node scripts/bootstrap.mjs start|test");
    process.exit(2);
}
