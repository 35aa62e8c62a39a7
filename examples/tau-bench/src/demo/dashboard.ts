import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

const webDir = fileURLToPath(new URL("../../../../apps/web/", import.meta.url));
const pnpmSpec = "pnpm@12.4.2";

/** A running dashboard (the web app's `server.mjs`) for the demo. */
export interface DemoDashboard {
  url: string;
  close(): Promise<void>;
}

function pnpmCommand(): [string, string[]] {
  const probe = spawnSync("pnpm", ["--version"], { encoding: "utf8" });
  return probe.status === 0 ? ["pnpm", []] : ["npx", ["--yes", pnpmSpec]];
}

async function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });
}

/**
 * Builds the dashboard if it has no production build yet, then starts it against `executorUrl` on
 * `port` (or a free port when that one is taken). Resolves once it answers.
 * @throws Error when the build fails or the server does not answer within 60 s.
 */
export async function startDashboard(executorUrl: string, port: number): Promise<DemoDashboard> {
  const [cmd, pre] = pnpmCommand();
  if (!existsSync(`${webDir}.next/BUILD_ID`)) {
    console.log("building the dashboard once (next build)…");
    const built = spawnSync(cmd, [...pre, "--filter", "@tristate/web", "run", "build"], { stdio: "inherit" });
    if (built.status !== 0) throw new Error("the dashboard build failed (pnpm --filter @tristate/web run build)");
  }
  let chosen = port;
  if (!(await portFree(chosen))) {
    const srv = createServer();
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
    chosen = (srv.address() as { port: number }).port;
    await new Promise<void>((r) => srv.close(() => r()));
  }
  const child: ChildProcess = spawn(
    process.execPath,
    // The dashboard's own server (server.mjs): it passes the browser's address on to the executor,
    // which the demo's executor trusts from loopback (TRISTATE_TRUSTED_PROXIES), so failed sign-ins
    // are counted per browser, not against the dashboard.
    [`${webDir}server.mjs`],
    {
      cwd: webDir,
      env: {
        ...process.env,
        EXECUTOR_URL: executorUrl,
        PORT: String(chosen),
        HOST: "127.0.0.1",
        NODE_ENV: "production",
        NEXT_TELEMETRY_DISABLED: "1",
      },
      stdio: ["ignore", "ignore", "inherit"],
    },
  );
  const url = `http://127.0.0.1:${chosen}`;
  const until = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the dashboard exited (code ${child.exitCode})`);
    try {
      const res = await fetch(`${url}/login`);
      if (res.status < 500) break;
    } catch {
      // not up yet
    }
    if (Date.now() > until) {
      child.kill("SIGTERM");
      throw new Error("the dashboard did not answer within 60 s");
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  return {
    url,
    async close() {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((r) => child.once("exit", () => r()));
      child.kill("SIGTERM");
      await exited;
    },
  };
}
