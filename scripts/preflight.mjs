#!/usr/bin/env node
import { spawnSync } from "node:child_process";
// `npm test`'s first step: every prerequisite outside the clone is checked before any test runs, and a
// missing one fails the run with the line that says what to install. Nothing is skipped for a missing
// prerequisite: a test that cannot run is a failure, said here once instead of as hundreds of errors.
import { existsSync } from "node:fs";
import { connect } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const LOCAL_TEST_DATABASE_URL = "postgresql://postgres@127.0.0.1:5432/test";
const adminUrl = process.env.TRISTATE_TEST_DATABASE_URL || LOCAL_TEST_DATABASE_URL;

/** Where the tests make their databases: `TRISTATE_TEST_DATABASE_URL`'s host and port. */
function postgresAddress() {
  const parsed = new URL(adminUrl);
  return { host: parsed.hostname || "127.0.0.1", port: Number(parsed.port || 5432) };
}

/**
 * Asks the db package's own check (it has `pg`) whether the tests' server is fit: connects to the admin
 * URL and checks the user may create databases. @returns a problem sentence, or null when it is fit.
 */
function postgresProblem() {
  const check = join(
    dirname(fileURLToPath(import.meta.url)),
    "..",
    "packages",
    "db",
    "scripts",
    "check-test-server.mjs",
  );
  const res = spawnSync(process.execPath, [check, adminUrl], { encoding: "utf8" });
  return res.status === 0
    ? null
    : (res.stderr.trim() || res.stdout.trim() || `exit ${res.status}`).replaceAll(adminUrl, redacted(adminUrl));
}

/** The URL without its password, for messages. */
function redacted(url) {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = "***";
  return parsed.toString();
}

/** Resolves true when a TCP connection to host:port opens within `timeoutMs`. */
function reachable({ host, port }, timeoutMs = 3000) {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

const problems = [];
const pg = postgresAddress();
if (!(await reachable(pg))) {
  problems.push(
    `PostgreSQL is not reachable at ${pg.host}:${pg.port}. Install and start it (Debian: apt-get install -y ` +
      "postgresql && pg_ctlcluster <version> main start), with trust auth for local connections, or set " +
      "TRISTATE_TEST_DATABASE_URL to a server the tests may create databases on.",
  );
} else {
  const problem = postgresProblem();
  if (problem) problems.push(`PostgreSQL: ${problem}.`);
}
const chromium = process.env.E2E_CHROMIUM ?? "/usr/bin/chromium";
if (!existsSync(chromium)) {
  problems.push(
    `No Chromium at ${chromium} (the dashboard's Playwright tests drive it). Install Debian's: ` +
      "apt-get update && apt-get install -y chromium — or set E2E_CHROMIUM to a Chromium binary.",
  );
}
// The alert rules' tests (apps/executor/test/alert-rules.test.ts, prometheus-alerts.test.ts) run Debian's
// promtool and prometheus, both in its `prometheus` package.
for (const binary of ["promtool", "prometheus"]) {
  if (spawnSync(binary, ["--version"], { encoding: "utf8" }).status !== 0) {
    problems.push(
      `No ${binary} on the PATH (the alert rules' tests run it). Install Debian's: apt-get update && ` +
        "apt-get install -y prometheus",
    );
  }
}
if (problems.length > 0) {
  for (const problem of problems) console.error(`npm test: missing prerequisite — ${problem}`);
  process.exit(1);
}
console.log(
  `npm test: prerequisites found (PostgreSQL at ${pg.host}:${pg.port}, Chromium at ${chromium}, promtool and prometheus)`,
);
