import { randomBytes } from "node:crypto";
import { join } from "node:path";
import {
  ApiKeyStore,
  createPrismaIntentStore,
  createTestDatabase,
  type PrismaIntentStore,
  type TestDatabase,
} from "@tristate/db";
import { type FakeRemote, startFakeRemote } from "@tristate/testing";
import { afterEach, expect, it } from "vitest";
import { type ServiceProcess, startServiceProcess } from "./processes.ts";

const config = join(import.meta.dirname, "fixtures/refund.config.ts");
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
});

async function setup(): Promise<{
  db: TestDatabase;
  store: PrismaIntentStore;
  remote: FakeRemote;
  env: Record<string, string>;
}> {
  const db = await createTestDatabase();
  cleanups.push(() => db.drop());
  const store = createPrismaIntentStore({ databaseUrl: db.url });
  cleanups.push(() => store.close());
  const remote = await startFakeRemote();
  cleanups.push(() => remote.close());
  return {
    db,
    store,
    remote,
    env: {
      DATABASE_URL: db.url,
      TRISTATE_CONFIG: config,
      TEST_REMOTE_URL: remote.url,
      TRISTATE_SWEEP_INTERVAL_MS: "200",
      TRISTATE_SWEEP_LIMIT: "6",
    },
  };
}

async function start(env: Record<string, string>): Promise<ServiceProcess> {
  const p = await startServiceProcess(env);
  cleanups.push(() => p.kill());
  return p;
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for: ${what}`);
}

async function counts(store: PrismaIntentStore): Promise<Record<string, number>> {
  const { rows } = await store.pool.query<{ status: string; n: number }>(
    "SELECT status::text, count(*)::int AS n FROM intent_records GROUP BY status",
  );
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

it("two service processes and their sweepers on one database: each stale record is reconciled exactly once", async () => {
  const { store, remote, env } = await setup();
  const now = Date.now();
  const keys: string[] = [];
  for (let i = 0; i < 30; i++) {
    const key = randomBytes(16).toString("hex");
    keys.push(key);
    const args = { order_id: `O-${i}`, amount: "10.00", currency: "EUR" };
    await store.claim(
      {
        key,
        runId: "run-stale",
        stepId: `s-${i}`,
        tool: "issue_refund",
        args,
        identity: { order_id: `O-${i}`, amount: "10.00" },
        attempt: 1,
        leaseUntilEpochMs: now - 1000,
        compensation: null,
        createdAtEpochMs: now - 5000,
        traceId: null,
      },
      [],
      now - 5000,
    );
    if (i % 2 === 0) {
      // the crashed executor had sent it: the effect exists
      await fetch(`${remote.url}/effects`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": key },
        body: JSON.stringify(args),
      });
    }
  }
  const postsBefore = remote.posts;
  const logged = { ...env, LOG_LEVEL: "info" };
  const services = await Promise.all([start(logged), start(logged)]);
  await until("every stale record settled", async () => (await counts(store)).SUCCEEDED === 30);
  // Each pass that took records logs one summary line: between them they took each record once.
  const passes = services.flatMap((p) =>
    p
      .output()
      .split("\n")
      .filter((line) => line.includes('"msg":"sweeper pass"'))
      .map((line) => JSON.parse(line) as { taken: number; succeeded: number; left: number; duration_ms: number }),
  );
  expect(passes.reduce((n, p) => n + p.taken, 0)).toBe(30);
  expect(passes.reduce((n, p) => n + p.succeeded, 0)).toBe(30);
  expect(passes.every((p) => p.left === 0 && p.duration_ms >= 0)).toBe(true);
  for (const key of keys) {
    const events = await store.listEvents(key);
    expect(events.filter((e) => e.type === "lease_expired")).toHaveLength(1);
    expect(events.filter((e) => e.type === "outcome")).toHaveLength(1);
    expect(remote.effects.filter((e) => e.clientRef === key)).toHaveLength(1);
  }
  expect(remote.posts - postsBefore).toBe(15); // one resend per absent effect, none for found ones
});

it("SIGKILL of the service with calls in flight → restart → the sweeper reconciles: no duplicate, nothing left PENDING", async () => {
  const { store, remote, env, db } = await setup();
  const first = await start(env);
  const keys = new ApiKeyStore(store.prisma);
  const agent = (await keys.create({ name: "agent", role: "agent" })).secret;
  // Every request commits at once but answers only after 2 s: all calls are in flight when we kill.
  for (let i = 0; i < 8; i++) remote.fault({ respondDelayMs: 2000 });
  const calls = Array.from({ length: 8 }, (_, i) =>
    fetch(`${first.url}/trpc/calls.execute`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${agent}` },
      body: JSON.stringify({
        runId: "run-kill",
        stepId: `s-${i}`,
        tool: "issue_refund",
        args: { order_id: `K-${i}`, amount: 5, currency: "EUR" },
        budgetMs: 6000,
      }),
    }).catch(() => null),
  );
  await until("all 8 requests reached the remote", async () => remote.posts >= 8, 10_000);
  await first.kill();
  await Promise.all(calls);
  expect((await counts(store)).PENDING).toBe(8);

  await start(env);
  await until("nothing PENDING and all settled", async () => (await counts(store)).SUCCEEDED === 8, 40_000);
  expect(remote.effects).toHaveLength(8);
  expect(new Set(remote.effects.map((e) => e.clientRef)).size).toBe(8);
  const { rows } = await store.pool.query(
    "SELECT key FROM intent_records WHERE status = 'PENDING' AND lease_until_at < now()",
  );
  expect(rows).toHaveLength(0);
  expect(db.url).toBeTruthy();
}, 90_000);

it("SIGTERM lets in-flight calls finish (graceful stop), then exits 0 with nothing PENDING", async () => {
  const { store, remote, env } = await setup();
  const svc = await start({ ...env, TRISTATE_SHUTDOWN_GRACE_MS: "10000" });
  const agent = (await new ApiKeyStore(store.prisma).create({ name: "agent", role: "agent" })).secret;
  remote.fault({ respondDelayMs: 1000 });
  const call = fetch(`${svc.url}/trpc/calls.execute`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${agent}` },
    body: JSON.stringify({
      runId: "run-term",
      stepId: "s-1",
      tool: "issue_refund",
      args: { order_id: "T-1", amount: 5, currency: "EUR" },
      budgetMs: 8000,
    }),
  });
  await until("the request reached the remote", async () => remote.posts >= 1, 10_000);
  const code = await svc.stop();
  const res = await call;
  expect(res.status).toBe(200);
  expect(((await res.json()) as { result: { data: { status: string } } }).result.data.status).toBe("SUCCEEDED");
  expect(code).toBe(0);
  expect((await counts(store)).PENDING ?? 0).toBe(0);
  expect(remote.effects).toHaveLength(1);
});
