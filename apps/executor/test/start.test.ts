import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { freePort, listening } from "./processes.ts";

const appDir = join(import.meta.dirname, "..");

/** What a package manager prints when a script it ran ended by a signal or with a failure. */
const RUNNER_FAILURE = /ELIFECYCLE|Command failed|npm (ERR!|error)|exited with signal/i;

/**
 * Starts the executor's `start` script the way pnpm and npm run it (`sh -c "<script>"`, what `npm
 * start` ends in: the built service with the example remotes) in a process group of its own, as a
 * terminal's foreground job, on a fresh embedded database; resolves once its output matches `until`
 * (by default: once it printed its URL).
 */
async function startScript(until = /Tristate executor at (\S+)/) {
  const scripts = JSON.parse(readFileSync(join(appDir, "package.json"), "utf8")).scripts as Record<string, string>;
  const dataDir = mkdtempSync(join(tmpdir(), "tristate-start-"));
  const remotes = [await freePort(), await freePort()];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_OPTIONS: "",
    TRISTATE_DATA_DIR: dataDir,
    PORT: "0",
    LOG_LEVEL: "warn",
    TRISTATE_PAYMENTS_URL: `http://127.0.0.1:${remotes[0]}`,
    TRISTATE_MAIL_URL: `http://127.0.0.1:${remotes[1]}`,
  };
  delete env.DATABASE_URL;
  delete env.TRISTATE_CONFIG;
  const child = spawn("sh", ["-c", scripts.start ?? ""], { cwd: appDir, env, detached: true });
  let out = "";
  child.stdout.on("data", (c: Buffer) => {
    out += c.toString();
  });
  child.stderr.on("data", (c: Buffer) => {
    out += c.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.once("exit", (code, signal) => r({ code, signal })),
  );
  const deadline = Date.now() + 90_000;
  while (!until.test(out) && Date.now() < deadline && child.exitCode === null) {
    await new Promise((r) => setTimeout(r, 100));
  }
  const url = /Tristate executor at (\S+)/.exec(out)?.[1];
  return {
    url,
    ports: [...remotes, url ? Number(new URL(url).port) : 0],
    output: () => out,
    exited,
    /** Stops whatever is left (a failed test) and removes the database. */
    cleanUp() {
      if (child.exitCode === null && child.signalCode === null) process.kill(-(child.pid as number), "SIGKILL");
      rmSync(dataDir, { recursive: true, force: true });
    },
    /** Sends `signal` to the whole group (Ctrl-C in a terminal) or to the script's process alone. */
    signal(signal: NodeJS.Signals, group: boolean) {
      process.kill(group ? -(child.pid as number) : (child.pid as number), signal);
    },
  };
}

it("the README's main command starts the built service on the embedded default with the example catalog", async () => {
  const started = await startScript();
  try {
    const { url } = started;
    const out = started.output();
    const key = /(ts_admin_[A-Za-z0-9_-]+)/.exec(out)?.[1];
    expect(url, out).toBeTruthy();
    expect(key, "the first start prints an admin key once").toBeTruthy();
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    const res = await fetch(`${url}/trpc/calls.execute`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
      body: JSON.stringify({
        runId: "run-7",
        stepId: "step-3",
        tool: "issue_refund",
        args: { order_id: "A-1182", amount: 49.9, currency: "EUR", reason: "arrived broken" },
        budgetMs: 45_000,
      }),
    });
    const body = (await res.json()) as { result: { data: { status: string; idempotency_key: string } } };
    expect(res.status).toBe(200);
    expect(body.result.data.status).toBe("SUCCEEDED");
    expect(body.result.data.idempotency_key).toBe("a6c763d983f2bfeb6708a2a2494a12de"); // the source design's example key
  } finally {
    started.cleanUp();
  }
}, 120_000);

describe("stopping `npm start`'s service: exit 0 (no package-manager failure), nothing left listening", () => {
  for (const [signal, group, starting] of [
    ["SIGINT", true, false],
    ["SIGTERM", false, false],
    ["SIGINT", true, true],
  ] as const) {
    const whom = group ? "the process group (Ctrl-C)" : "the script's process alone";
    it(`${signal} to ${whom}${starting ? " while the database starts" : ""}`, async () => {
      const started = await startScript(starting ? /example mail service at/ : undefined);
      try {
        if (!starting) {
          expect(started.url, started.output()).toBeTruthy();
          for (const port of started.ports) expect(await listening(port), `port ${port}`).toBe(true);
        }
        started.signal(signal, group);
        const { code, signal: killedBy } = await started.exited;
        expect({ code, killedBy }, started.output()).toEqual({ code: 0, killedBy: null });
        expect(started.output()).not.toMatch(RUNNER_FAILURE);
        for (const port of started.ports) expect(await listening(port), `port ${port}`).toBe(false);
      } finally {
        started.cleanUp();
      }
    }, 120_000);
  }
});

it("a start whose port is taken releases the embedded database: a retry on a free port works and still makes the first admin key", async () => {
  const { startService } = await import("../src/service.ts");
  const { readEnv } = await import("../src/env.ts");
  const dataDir = mkdtempSync(join(tmpdir(), "tristate-port-taken-"));
  const taken = createServer();
  await new Promise<void>((r) => taken.listen(0, "127.0.0.1", r));
  const { port } = taken.address() as { port: number };
  const envFor = (p: number) =>
    readEnv({ PORT: String(p), HOST: "127.0.0.1", LOG_LEVEL: "silent", TRISTATE_DATA_DIR: dataDir });
  try {
    await expect(startService(envFor(port), { tools: [] })).rejects.toMatchObject({ code: "EADDRINUSE" });
    const service = await startService(envFor(0), { tools: [] });
    try {
      expect(service.firstAdminKey).toMatch(/^ts_admin_/);
      expect(await service.services.keys.count()).toBe(1);
    } finally {
      await service.close();
    }
  } finally {
    await new Promise<void>((r) => taken.close(() => r()));
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 120_000);
