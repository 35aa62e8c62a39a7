/**
 * The dashboard's server stopped by Ctrl-C (SIGINT to the terminal's process group) or by a SIGTERM to
 * the script's process alone (a supervisor): the web app's `start` script and the root's `dashboard`
 * script, run as pnpm runs them (`sh -c "<script>"`), end with exit code 0 — not by the signal, which made pnpm print
 * "ELIFECYCLE Command failed" — and nothing is left listening (issue 22 §6).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, stack, test } from "../src/fixtures.ts";

const webDir = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "apps", "web");

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const { port } = srv.address() as { port: number };
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** True when something accepts connections on 127.0.0.1:`port`. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/** The first HTTP answer of `url` (any status), polling until `deadline`; null when none came. */
async function firstAnswer(url: string, child: ChildProcess, deadline: number): Promise<number | null> {
  while (Date.now() < deadline && child.exitCode === null) {
    try {
      return (await fetch(url, { redirect: "manual" })).status;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return null;
}

const repoRoot = join(webDir, "..", "..");

for (const [dir, script, signal, group] of [
  [webDir, "start", "SIGINT", true],
  [webDir, "start", "SIGTERM", false],
  // `pnpm dashboard` from the repository's root: `pnpm --filter @tristate/web start` (a recursive run)
  // reports "Command failed" on Ctrl-C whatever the script does.
  [repoRoot, "dashboard", "SIGINT", true],
] as const) {
  const whom = group ? "its process group (Ctrl-C)" : "its process alone";
  const name = dir === webDir ? "the dashboard's start script" : "the root's dashboard script";
  test(`${name} stopped by ${signal} to ${whom}: exit 0, no pnpm failure, the port closed`, async ({
    request: _unused,
  }, testInfo) => {
    test.setTimeout(90_000);
    const scripts = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).scripts as Record<string, string>;
    const port = await freePort();
    const started = Date.now();
    const child = spawn("sh", ["-c", scripts[script] ?? ""], {
      cwd: dir,
      detached: true,
      env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", EXECUTOR_URL: stack().executorUrl },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout?.on("data", (c: Buffer) => {
      out += c.toString();
    });
    child.stderr?.on("data", (c: Buffer) => {
      out += c.toString();
    });
    const exited = new Promise<{ code: number | null; killedBy: NodeJS.Signals | null }>((r) =>
      child.once("exit", (code, killedBy) => r({ code, killedBy })),
    );
    try {
      const status = await firstAnswer(`http://127.0.0.1:${port}/login`, child, Date.now() + 60_000);
      expect(status, out).toBe(200);
      testInfo.annotations.push({ type: "time to first 200", description: `${Date.now() - started} ms` });
      process.kill(group ? -(child.pid as number) : (child.pid as number), signal);
      expect(await exited, out).toEqual({ code: 0, killedBy: null });
      expect(out).not.toMatch(/ELIFECYCLE|Command failed|npm (ERR!|error)/i);
      expect(await listening(port)).toBe(false);
    } finally {
      if (child.exitCode === null && child.signalCode === null) process.kill(-(child.pid as number), "SIGKILL");
    }
  });
}
