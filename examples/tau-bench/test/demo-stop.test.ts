/**
 * `pnpm demo` stopped by Ctrl-C or SIGTERM (issue 14): the signal reaches the whole process group
 * (the package scripts' shells, the demo), the demo stops what it started and revokes its keys, and
 * the script ends with exit code 0 — not by the signal, which made pnpm print "Command failed" — with
 * nothing left listening. The demo's script is run as pnpm runs it (`sh -c "<script> <args>"`).
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const pkgDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

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

async function demoStoppedBy(signal: "SIGINT" | "SIGTERM") {
  const scripts = JSON.parse(await readFile(join(pkgDir, "package.json"), "utf8")).scripts as Record<string, string>;
  const dataDir = await mkdtemp(join(tmpdir(), "tristate-demo-stop-"));
  dirs.push(dataDir);
  const child = spawn("sh", ["-c", `${scripts.demo} --port 0 --no-dashboard`], {
    cwd: pkgDir,
    // Its own process group, as a terminal's foreground job: Ctrl-C signals every process in it.
    detached: true,
    env: {
      ...process.env,
      TAU_BENCH_DATA_DIR: join(dataDir, "no-tau-bench-data"),
      TRISTATE_DATA_DIR: join(dataDir, "pgdata"),
      DATABASE_URL: "",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (c: Buffer) => {
    out += c.toString();
  });
  child.stderr.on("data", (c: Buffer) => {
    out += c.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, sig) => resolve({ code, signal: sig })),
  );
  const until = Date.now() + 90_000;
  while (!out.includes("Ctrl-C stops it") && child.exitCode === null && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 200));
  }
  expect(out, out).toContain("Ctrl-C stops it");
  const port = Number(/Tristate executor API: http:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1]);
  expect(await listening(port)).toBe(true);
  process.kill(-(child.pid as number), signal);
  const result = await exited;
  return { ...result, out, port };
}

describe("pnpm demo stops cleanly", () => {
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    it(`${signal} to the group: exit 0, keys revoked, nothing left listening`, async () => {
      const { code, signal: killedBy, out, port } = await demoStoppedBy(signal);
      expect({ code, killedBy }, out).toEqual({ code: 0, killedBy: null });
      expect(out).toContain(`${signal}: stopping the dashboard and the service`);
      expect(out).toContain("Revoked the demo's 2 API keys.");
      expect(await listening(port)).toBe(false);
    });
  }
});
