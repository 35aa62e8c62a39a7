import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
  const { port } = srv.address() as { port: number };
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

it("the README's main command starts the service on the embedded default with the example catalog", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "tristate-start-"));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_OPTIONS: "",
    TRISTATE_DATA_DIR: dataDir,
    PORT: "0",
    LOG_LEVEL: "warn",
    TRISTATE_PAYMENTS_URL: `http://127.0.0.1:${await freePort()}`,
    TRISTATE_MAIL_URL: `http://127.0.0.1:${await freePort()}`,
  };
  delete env.DATABASE_URL;
  delete env.TRISTATE_CONFIG;
  delete env.TRISTATE_DEMO_FAULTS;
  const child = spawn(process.execPath, ["--import", "tsx", "src/start.ts"], {
    cwd: join(import.meta.dirname, ".."),
    env,
  });
  let out = "";
  child.stdout.on("data", (c: Buffer) => {
    out += c.toString();
  });
  child.stderr.on("data", (c: Buffer) => {
    out += c.toString();
  });
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  try {
    const deadline = Date.now() + 60_000;
    while (!/Tristate executor at (\S+)/.test(out) && Date.now() < deadline && child.exitCode === null) {
      await new Promise((r) => setTimeout(r, 100));
    }
    const url = /Tristate executor at (\S+)/.exec(out)?.[1];
    const key = /(ts_admin_[A-Za-z0-9_-]+)/.exec(out)?.[1];
    expect(url, out).toBeTruthy();
    expect(key, "the first start prints an admin key once").toBeTruthy();
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
    // The example services never fail by default, and the start says how to make them.
    expect(out).toContain("example services' faults (TRISTATE_DEMO_FAULTS): off — to see UNKNOWN outcomes");
    expect(out).toContain("start with TRISTATE_DEMO_FAULTS=on");
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 90_000);

it("an invalid TRISTATE_DEMO_FAULTS stops the start with a message naming the setting and the rule", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "tristate-start-faults-"));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_OPTIONS: "",
    TRISTATE_DATA_DIR: dataDir,
    PORT: "0",
    TRISTATE_PAYMENTS_URL: `http://127.0.0.1:${await freePort()}`,
    TRISTATE_MAIL_URL: `http://127.0.0.1:${await freePort()}`,
    TRISTATE_DEMO_FAULTS: "timeout-after-commit=0.7,lag=0.4",
  };
  delete env.DATABASE_URL;
  delete env.TRISTATE_CONFIG;
  try {
    const res = spawnSync(process.execPath, ["--import", "tsx", "src/start.ts"], {
      cwd: join(import.meta.dirname, ".."),
      env,
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(res.status, res.stdout + res.stderr).toBe(1);
    expect(res.stderr).toContain("TRISTATE_DEMO_FAULTS: the rates add up to 1.1; at most 1 is allowed");
    expect(res.stdout).not.toContain("Tristate executor at");
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}, 90_000);

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
