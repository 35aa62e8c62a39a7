#!/usr/bin/env node
// The README's two commands land here: `npm start` and `npm test`. On a machine with only Node 20
// and npm, this installs pnpm (the version pinned in package.json's packageManager) and the
// workspace's dependencies, then runs the main job or every test.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
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

function pnpmStatus(args, extraEnv) {
  const probe = spawnSync("pnpm", ["--version"], { encoding: "utf8" });
  const [cmd, pre] =
    probe.status === 0 && `pnpm@${probe.stdout.trim()}` === pnpmSpec ? ["pnpm", []] : ["npx", ["--yes", pnpmSpec]];
  const res = spawnSync(cmd, [...pre, ...args], { cwd: root, stdio: "inherit", env: { ...process.env, ...extraEnv } });
  if (res.error) throw res.error;
  return res.status ?? 1;
}

/**
 * Sums the packages' JSON reports into one closing line and answers the number of failures. A package
 * whose tests did not run or stopped before reporting (no browser, no database, a crash, or left
 * queued after an earlier failure: pnpm's `pnpm-exec-summary.json` says so) counts as one failure,
 * so the line never says "0 failed" for a run that failed.
 */
function summarise(dir, status) {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const file of existsSync(dir) ? readdirSync(dir) : []) {
    if (!file.endsWith(".json")) continue;
    const report = JSON.parse(readFileSync(join(dir, file), "utf8"));
    passed += report.numPassedTests ?? 0;
    failed += report.numFailedTests ?? 0;
    skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  }
  const notRun = [];
  let queued = 0;
  let failing = 0;
  const execSummary = join(root, "pnpm-exec-summary.json");
  if (existsSync(execSummary)) {
    const { executionStatus = {} } = JSON.parse(readFileSync(execSummary, "utf8"));
    for (const [path, entry] of Object.entries(executionStatus)) {
      if (entry.status === "failure" || entry.status === "queued" || entry.status === "running") {
        if (entry.status === "failure") failing++;
        else queued++;
        notRun.push(
          `${path.replace(`${root}/`, "") || "."} (${entry.status === "failure" ? "failed" : "did not run"})`,
        );
      }
    }
    rmSync(execSummary, { force: true });
  }
  // Packages left queued never ran: one failure each. A failed run whose reports show no failure
  // (the tests could not start) counts each failing package as one failure (at least one).
  failed += queued;
  if (status !== 0 && failed === 0) failed = Math.max(1, failing);
  console.log(`\nall packages: ${passed} passed, ${failed} failed, ${skipped} skipped`);
  if (notRun.length) console.log(`packages not passing: ${notRun.join(", ")}`);
  return failed;
}

/** Written after a successful install; an install is due when anything it depends on is newer. */
const installStamp = join(root, "node_modules", ".tristate-installed");

/**
 * Whether the installed dependencies are current: installed (by this script) after the last change
 * to the lockfile, the workspace file or any workspace package.json, and the generated Prisma client
 * (db's postinstall) is there. Saves a `pnpm install` (0.5 s; 5–10 s through npx) on every start.
 */
function installCurrent() {
  if (!existsSync(installStamp) || !existsSync(join(root, "packages/db/src/generated/prisma/client.ts"))) return false;
  const installed = statSync(installStamp).mtimeMs;
  const inputs = ["pnpm-lock.yaml", "pnpm-workspace.yaml", "package.json", ".npmrc", "e2e/package.json"];
  for (const group of ["apps", "packages", "examples"]) {
    for (const dir of readdirSync(join(root, group))) inputs.push(join(group, dir, "package.json"));
  }
  return inputs.every((file) => !existsSync(join(root, file)) || statSync(join(root, file)).mtimeMs <= installed);
}

if (!installCurrent()) {
  pnpm(["install", "--frozen-lockfile"]);
  writeFileSync(installStamp, `${new Date().toISOString()}\n`);
}
switch (mode) {
  case "start": {
    // The service runs from its build (apps/executor/scripts/build.mjs), made now when missing or
    // older than the sources, so the start does not compile TypeScript.
    const { ensureBuilt } = await import("../apps/executor/scripts/build.mjs");
    try {
      await ensureBuilt();
    } catch (error) {
      console.error(`the service's build failed: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    }
    // A long-running service: run it as this process's only child (no pnpm or tsx CLI in between,
    // which do not pass signals on) and forward SIGTERM/SIGINT, so stopping `npm start` stops the
    // service gracefully instead of leaving it running as an orphan.
    const child = spawn(process.execPath, ["scripts/launch.mjs", "start"], {
      cwd: join(root, "apps/executor"),
      stdio: "inherit",
    });
    for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(signal, () => child.kill(signal));
    // npm does not always pass its signal on; when npm is gone (this process re-parented), stop too.
    const parent = process.ppid;
    setInterval(() => {
      if (process.ppid !== parent) child.kill("SIGTERM");
    }, 500).unref();
    child.on("exit", (code, signal) => process.exit(code ?? (signal ? 143 : 1)));
    break;
  }
  case "test": {
    // PostgreSQL and Chromium: a missing one fails here with what to install, never as skipped tests.
    run(process.execPath, ["scripts/preflight.mjs"]);
    pnpm(["run", "lint"]);
    // Dead files, exports and dependencies (knip.json names the entries: benches, demos, configs).
    pnpm(["run", "knip"]);
    run(process.execPath, ["scripts/check-boundaries.mjs"]);
    run(process.execPath, ["scripts/check-compose.mjs"]);
    pnpm(["run", "typecheck"]);
    const results = join(root, "test-results");
    rmSync(results, { recursive: true, force: true });
    mkdirSync(results, { recursive: true });
    // Each package's vitest also writes a JSON report, summed below into one closing line.
    const status = pnpmStatus(["-r", "--workspace-concurrency=1", "--report-summary", "run", "test"], {
      TRISTATE_TEST_RESULTS_DIR: results,
    });
    const failed = summarise(results, status);
    process.exit(status !== 0 ? status : failed > 0 ? 1 : 0);
    break;
  }
  default:
    console.error("usage: node scripts/bootstrap.mjs start|test");
    process.exit(2);
}
