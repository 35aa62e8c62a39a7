import { ApiKeyStore, createTestDatabase, type TestDatabase } from "@tristate/db";
import { type FakeRemote, refundTool, startFakeRemote } from "@tristate/testing";
import { startTcpProxy, type TcpProxy } from "@tristate/testing/tcp-proxy";
import { afterAll, afterEach, beforeAll } from "vitest";
import { readEnv } from "../src/env.ts";
import { type RunningService, startService } from "../src/service.ts";

/** A service whose database is reached through a TCP proxy that can stall (issue 21 §1). */
export interface StalledStack {
  db: TestDatabase;
  proxy: TcpProxy;
  /** The database's URL through the proxy. */
  proxiedUrl: string;
  remote: FakeRemote;
  service: RunningService;
  agentKey: string;
  /** POST `calls.execute` with the agent key: the refund tool, run `run-stall`, and `body`'s fields. */
  execute(body: Record<string, unknown>): Promise<Response>;
  close(): Promise<void>;
}

/** Starts a fresh database, the proxy in front of it, a fake remote, and the service over the proxy. */
export async function startStalledStack(): Promise<StalledStack> {
  const db = await createTestDatabase();
  const url = new URL(db.url);
  const proxy = await startTcpProxy({ targetHost: url.hostname, targetPort: Number(url.port || 5432) });
  url.host = `127.0.0.1:${proxy.port}`;
  const proxiedUrl = url.toString();
  const remote = await startFakeRemote();
  const env = readEnv({
    DATABASE_URL: proxiedUrl,
    PORT: "0",
    LOG_LEVEL: "silent",
    TRISTATE_SWEEP_INTERVAL_MS: "0",
    TRISTATE_ROLLUP_INTERVAL_MS: "0",
    TRISTATE_SHUTDOWN_GRACE_MS: "1000",
  });
  const service = await startService(env, { tools: [refundTool(remote)] });
  const agentKey = (await new ApiKeyStore(service.services.store.prisma).create({ name: "agent", role: "agent" }))
    .secret;
  return {
    db,
    proxy,
    proxiedUrl,
    remote,
    service,
    agentKey,
    execute: (body) =>
      fetch(`${service.url}/trpc/calls.execute`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${agentKey}` },
        body: JSON.stringify({
          runId: "run-stall",
          tool: "issue_refund",
          args: { order_id: "A-1", amount: 10, currency: "EUR", reason: "stall" },
          ...body,
        }),
      }),
    async close() {
      proxy.resume();
      await service.close();
      await remote.close();
      await proxy.close();
      await db.drop();
    },
  };
}

/** Slack for a loaded 2-core machine on top of each time bound these tests check, ms. */
export const STALL_SLACK_MS = 500;

/**
 * One {@link StalledStack} for a test file: started before its tests, forwarding resumed after each,
 * closed after all. Returns a getter (the stack exists once `beforeAll` ran).
 */
export function useStalledStack(): () => StalledStack {
  let stack: StalledStack | undefined;
  beforeAll(async () => {
    stack = await startStalledStack();
  });
  afterEach(() => stack?.proxy.resume());
  afterAll(async () => {
    await stack?.close();
  });
  return () => {
    if (!stack) throw new Error("useStalledStack: the stack is not started (use it inside a test)");
    return stack;
  };
}
