/**
 * The real stack the dashboard tests run against, in one Node process (run with `node --import tsx`):
 * a fresh PostgreSQL database, a fake remote for fault injection, a tiny OTLP/HTTP sink (so records
 * carry trace ids), the executor service in-process, API keys per role, and the web app
 * (`pnpm --filter @tristate/web start`) as a child process. Prints one line
 * `E2E_STACK <json>` ({@link StackInfo}) when everything answers; SIGTERM/SIGINT tear it all down.
 *
 * Tests cannot reach the fake remote's object from their worker process, so a small control server
 * queues faults on it: `POST /fault` with a JSON array of faults, `GET /remote` for its counters, and
 * `POST /executor {"reachable": false|true}` cuts the web app off from the executor or reconnects it
 * (the web app reaches the executor through a relay, `./executor-gate.ts`).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type AnyTool, callHttp, refusedUnderKey } from "@tristate/core";
import { ApiKeyStore, createTestDatabase } from "@tristate/db";
import { type FakeRemote, type Fault, refundTool, startFakeRemote } from "@tristate/executor/demo-remotes";
import { readEnv } from "@tristate/executor/env";
import { startService } from "@tristate/executor/service";
import { startExecutorGate } from "./executor-gate.ts";
import { KEY_NAMES, type StackInfo, TOOLS, TRACE_URL_TEMPLATE } from "./stack-info.ts";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The catalog: every test area has its own tools, so per-tool counts never mix between tests. */
function catalog(remote: FakeRemote): AnyTool[] {
  // Keyed, with key and identity probes: an ambiguous answer is reconciled (found / absent → resent).
  const keyed = (name: string) => refundTool(remote, { name });
  // Unsafe and without probes: an ambiguous answer goes straight to the human queue.
  const manual = (name: string) =>
    refundTool(remote, { name, kind: "unsafe", probe: undefined, probeByIdentity: undefined });
  return [
    keyed(TOOLS.overviewKeyed),
    manual(TOOLS.overviewManual),
    manual(TOOLS.queue),
    manual(TOOLS.conflict),
    manual(TOOLS.viewer),
    keyed(TOOLS.trace),
    keyed(TOOLS.pages),
    manual(TOOLS.pagesManual),
    manual(TOOLS.tenants),
    manual(TOOLS.record),
    manual(TOOLS.bulk),
    manual(TOOLS.runPage),
    refundTool(remote, {
      name: TOOLS.runs,
      compensation: {
        tool: TOOLS.runsReverse,
        args: (a: { order_id: string; amount: unknown; currency?: string | undefined }) => ({
          order_id: `REV-${a.order_id}`,
          amount: a.amount,
          currency: a.currency,
        }),
      },
    }),
    keyed(TOOLS.runsReverse),
    // Its key probe reads a failed item as the remote's refusal under the key (a declined charge).
    refundTool(remote, {
      name: TOOLS.declined,
      probe: async (_args, ctx) => {
        const url = `${remote.url}/effects?clientRef=${encodeURIComponent(ctx.clientRef)}`;
        const item = ((await callHttp(ctx, { method: "GET", url })).body as { state?: string }[])[0] ?? null;
        return item?.state === "failed" ? refusedUnderKey("the charge was declined", 402, item) : item;
      },
    }),
    refundTool(remote, {
      name: TOOLS.confirm,
      secretFields: ["reason"],
      confirmation: (a: { amount: unknown }) =>
        Number(a.amount) > 1000 ? "payouts over 1,000.00 need confirmation" : false,
    }),
  ];
}

async function listen(server: Server): Promise<string> {
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await listen(server);
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

async function waitForHttp(url: string, child: ChildProcess, output: () => string, timeoutMs: number) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the web app exited before answering (code ${child.exitCode}):\n${output()}`);
    }
    try {
      const res = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(5000) });
      if (res.status < 500) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the web app did not answer ${url} within ${timeoutMs} ms:\n${output()}`);
}

async function main() {
  const cleanups: (() => Promise<void>)[] = [];
  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      for (const cleanup of cleanups.reverse()) {
        try {
          await cleanup();
        } catch (error) {
          console.error("e2e stack: teardown step failed:", error);
        }
      }
    })();
    return stopping;
  };
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => {
      void stop().then(() => process.exit(0));
    });
  }

  try {
    const db = await createTestDatabase();
    cleanups.push(() => db.drop());
    const remote = await startFakeRemote();
    cleanups.push(() => remote.close());

    // OTLP/HTTP sink: accepts spans so tracing is on and records get trace ids.
    let spansReceived = 0;
    const sink = createServer((req, res) => {
      void readBody(req).then(() => {
        spansReceived++;
        json(res, 200, {});
      });
    });
    const sinkUrl = await listen(sink);
    cleanups.push(() => new Promise<void>((r) => sink.close(() => r())));

    const env = readEnv({
      DATABASE_URL: db.url,
      PORT: "0",
      LOG_LEVEL: process.env.E2E_EXECUTOR_LOG_LEVEL ?? "silent",
      // No background reconciliation: each test's records stay as its faults left them.
      TRISTATE_SWEEP_INTERVAL_MS: "0",
      TRISTATE_SHUTDOWN_GRACE_MS: "1000",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${sinkUrl}/v1/traces`,
      OTEL_SERVICE_NAME: "tristate-e2e",
      // The web app (on loopback) passes each browser's address on as X-Forwarded-For: believe it, so
      // failed sign-ins are counted per browser, not against the web server's own address.
      TRISTATE_TRUSTED_PROXIES: "127.0.0.1,::1",
      // Notification channels of the tests point at receivers on loopback, which the default (`*`,
      // public addresses only) refuses: list them exactly (docs/notifications.md "Where channels may point").
      TRISTATE_NOTIFY_ALLOW_HOSTS: "127.0.0.1,localhost",
    });
    const service = await startService(env, { tools: catalog(remote) });
    cleanups.push(() => service.close());

    // The web app reaches the executor through a switchable relay (POST /executor on the control server).
    const gate = await startExecutorGate(service.url);
    cleanups.push(() => gate.close());

    const keyStore = new ApiKeyStore(service.services.store.prisma);
    const keys = {
      agent: (await keyStore.create({ name: KEY_NAMES.agent, role: "agent" })).secret,
      viewer: (await keyStore.create({ name: KEY_NAMES.viewer, role: "viewer" })).secret,
      operator: (await keyStore.create({ name: KEY_NAMES.operator, role: "operator" })).secret,
      operator2: (await keyStore.create({ name: KEY_NAMES.operator2, role: "operator" })).secret,
      admin: (await keyStore.create({ name: KEY_NAMES.admin, role: "admin" })).secret,
    };

    const control = createServer((req, res) => {
      void (async () => {
        if (req.method === "POST" && req.url === "/fault") {
          const faults = JSON.parse((await readBody(req)) || "[]") as Fault[];
          remote.fault(...faults);
          return json(res, 200, { queued: faults.length });
        }
        if (req.method === "POST" && req.url === "/executor") {
          const { reachable } = JSON.parse((await readBody(req)) || "{}") as { reachable?: boolean };
          gate.open = reachable !== false;
          return json(res, 200, { reachable: gate.open });
        }
        if (req.method === "GET" && req.url === "/remote") {
          return json(res, 200, {
            posts: remote.posts,
            probes: remote.probes,
            effects: remote.effects.length,
            spansReceived,
          });
        }
        json(res, 404, { error: "not found" });
      })().catch((error: unknown) => json(res, 500, { error: String(error) }));
    });
    const controlUrl = await listen(control);
    cleanups.push(() => new Promise<void>((r) => control.close(() => r())));

    const webPort = Number(process.env.E2E_WEB_PORT ?? (await freePort()));
    const webUrl = `http://127.0.0.1:${webPort}`;
    let webOutput = "";
    // Its own process group, so teardown stops pnpm and the Next.js server under it together.
    const web = spawn("pnpm", ["--filter", "@tristate/web", "start"], {
      cwd: root,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        NODE_OPTIONS: "",
        PORT: String(webPort),
        EXECUTOR_URL: gate.url,
        TRACE_URL_TEMPLATE,
        NEXT_TELEMETRY_DISABLED: "1",
      },
    });
    const collect = (c: Buffer) => {
      webOutput = (webOutput + c.toString()).slice(-20_000);
      if (process.env.E2E_WEB_LOG) process.stderr.write(c);
    };
    web.stdout?.on("data", collect);
    web.stderr?.on("data", collect);
    const webExited = new Promise<void>((r) => web.once("exit", () => r()));
    cleanups.push(async () => {
      if (web.exitCode === null && web.signalCode === null && web.pid) {
        try {
          process.kill(-web.pid, "SIGTERM");
        } catch {
          // already gone
        }
        const killed = await Promise.race([webExited.then(() => true), new Promise((r) => setTimeout(r, 5000, false))]);
        if (!killed) {
          try {
            process.kill(-web.pid, "SIGKILL");
          } catch {
            // already gone
          }
        }
      }
    });
    await waitForHttp(`${webUrl}/login`, web, () => webOutput, 90_000);

    const info: StackInfo = {
      executorUrl: service.url,
      webUrl,
      controlUrl,
      traceSinkUrl: sinkUrl,
      keys,
      names: KEY_NAMES,
      tools: TOOLS,
      traceUrlTemplate: TRACE_URL_TEMPLATE,
    };
    process.stdout.write(`E2E_STACK ${JSON.stringify(info)}\n`);
  } catch (error) {
    console.error("e2e stack: start-up failed:", error);
    await stop();
    process.exit(1);
  }
}

void main();
