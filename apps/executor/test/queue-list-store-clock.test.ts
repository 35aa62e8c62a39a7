/**
 * Issue 21 §6 (rule 9) over HTTP on the real PostgreSQL: `queue.list` tells the operator whether a
 * waiting record's key has outlived the tool's key retention (a resend could then make a second
 * effect) by the database's clock, never the serving replica's — a replica a minute ahead does not
 * call a fresh key expired, one a second behind does not call an expired key fresh.
 */
import { ApiKeyStore, createTestDatabase, type TestDatabase } from "@tristate/db";
import { type FakeRemote, refundTool, startFakeRemote } from "@tristate/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { readEnv } from "../src/env.ts";
import { type RunningService, startService } from "../src/service.ts";

// biome-ignore lint/suspicious/noExplicitAny: JSON answers of the API
type Json = any;

describe("queue.list judges key retention by the database's clock", () => {
  let db: TestDatabase;
  let remote: FakeRemote;
  let service: RunningService;
  const keys = { agent: "", viewer: "" };
  let step = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    remote = await startFakeRemote();
    const env = readEnv({ DATABASE_URL: db.url, PORT: "0", LOG_LEVEL: "silent", TRISTATE_SWEEP_INTERVAL_MS: "0" });
    service = await startService(env, {
      // No probe: an ambiguous answer goes straight to the human queue. Keys are kept 30 s.
      tools: [
        refundTool(remote, { kind: "unsafe", probe: undefined, probeByIdentity: undefined, keyRetentionMs: 30_000 }),
      ],
    });
    const store = new ApiKeyStore(service.services.store.prisma);
    keys.agent = (await store.create({ name: "agent-1", role: "agent" })).secret;
    keys.viewer = (await store.create({ name: "viewer-1", role: "viewer" })).secret;
  });
  afterAll(async () => {
    await service?.close();
    await remote?.close();
    await db?.drop();
  });

  async function trpc(path: string, key: string, body?: unknown): Promise<Json> {
    const res = await fetch(`${service.url}/trpc/${path}`, {
      ...(body === undefined ? {} : { method: "POST", body: JSON.stringify(body) }),
      headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    });
    return res.json();
  }
  /** A record waiting for a person (the remote answers 504 without doing anything). */
  async function waiting(): Promise<string> {
    remote.fault({ answer: 504, commit: false });
    const args = { order_id: `Q-${++step}`, amount: "49.90", currency: "EUR" };
    const json = await trpc("calls.execute", keys.agent, {
      runId: "run-q",
      stepId: `s-${step}`,
      tool: "issue_refund",
      args,
      budgetMs: 8000,
    });
    expect(json.result.data).toMatchObject({ status: "UNKNOWN", resolution: "needs_human" });
    return json.result.data.idempotency_key;
  }
  /** queue.list's item for `key`, read while this replica's clock is `offsetMs` off. */
  async function listedWithReplicaClock(key: string, offsetMs: number) {
    const real = Date.now.bind(Date);
    const spy = vi.spyOn(Date, "now").mockImplementation(() => real() + offsetMs);
    try {
      const json = await trpc("queue.list", keys.viewer);
      return (json.result.data.items as Json[]).find((i) => i.key === key);
    } finally {
      spy.mockRestore();
    }
  }

  it("a replica 60 s ahead: a fresh record's key is not expired, no key-retention warning", async () => {
    const key = await waiting();
    const item = await listedWithReplicaClock(key, 60_000);
    expect(item).toMatchObject({ keyExpired: false, resendAllowed: true });
    expect(item.resendWarnings.join(" ")).not.toMatch(/key retention/);
  });

  it("a replica 1 s behind: a record 30.5 s old (by the database) has outlived its key, and the operator is warned", async () => {
    const key = await waiting();
    await service.services.store.prisma
      .$executeRaw`UPDATE intent_records SET created_at = clock_timestamp() - interval '30500 milliseconds' WHERE key = ${key}`;
    const item = await listedWithReplicaClock(key, -1_000);
    expect(item).toMatchObject({ keyExpired: true });
    expect(item.resendWarnings.join(" ")).toMatch(/older than the tool's key retention/);
  });
});
