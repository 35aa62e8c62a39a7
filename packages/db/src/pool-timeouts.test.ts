import { startTcpProxy, type TcpProxy } from "@tristate/testing/tcp-proxy";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { poolTimeoutConfig } from "./pool-timeouts.ts";
import { PrismaIntentStore } from "./prisma-intent-store.ts";
import { createTestDatabase, type TestDatabase } from "./test-database.ts";
import { isTransientDatabaseError } from "./transient.ts";

/** Issue 21 §1: the pool's waits are bounded, and what they throw is a transient database failure. */
describe("pool time limits", () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  let proxiedUrl: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    const url = new URL(db.url);
    proxy = await startTcpProxy({ targetHost: url.hostname, targetPort: Number(url.port || 5432) });
    url.host = `127.0.0.1:${proxy.port}`;
    proxiedUrl = url.toString();
  });
  afterAll(async () => {
    await proxy?.close();
    await db?.drop();
  });

  const caught = async (p: Promise<unknown>) =>
    p.then(
      () => null,
      (e: unknown) => e,
    );

  it("a statement over statement_timeout is cancelled by the server (57014), transient", async () => {
    const store = new PrismaIntentStore({ databaseUrl: db.url, timeouts: { statementTimeoutMs: 300 } });
    try {
      const error = await caught(store.pool.query("SELECT pg_sleep(2)"));
      expect((error as { code?: string }).code).toBe("57014");
      expect(isTransientDatabaseError(error)).toBe(true);
      // The connection is still good for the next statement.
      expect((await store.pool.query("SELECT 1 AS one")).rows[0]).toEqual({ one: 1 });
    } finally {
      await store.close();
    }
  });

  it("a stalled database: an open connection's query gives up at query_timeout, a new one at the connect timeout", async () => {
    const store = new PrismaIntentStore({
      databaseUrl: proxiedUrl,
      poolSize: 1,
      timeouts: { connectTimeoutMs: 500, statementTimeoutMs: 500 },
    });
    try {
      await store.pool.query("SELECT 1"); // one connection open before the stall
      proxy.stall();
      let started = performance.now();
      const stuck = await caught(store.pool.query("SELECT 1"));
      const queryMs = performance.now() - started;
      expect(String(stuck)).toMatch(/Query read timeout/);
      expect(isTransientDatabaseError(stuck)).toBe(true);
      // The pool dropped that connection: the next query needs a new one, which cannot open.
      started = performance.now();
      const unopened = await caught(store.pool.query("SELECT 1"));
      const connectMs = performance.now() - started;
      expect(isTransientDatabaseError(unopened)).toBe(true);
      // 500 + the 2 s margin, and 500: well under the stall, with slack for a loaded machine.
      expect(queryMs).toBeLessThan(4000);
      expect(connectMs).toBeLessThan(3000);
    } finally {
      proxy.resume();
      await store.close();
    }
  });

  it("refuses a limit that is not a positive number, naming it", () => {
    expect(() =>
      poolTimeoutConfig({ connectTimeoutMs: 0, statementTimeoutMs: 1, idleInTransactionTimeoutMs: 1 }),
    ).toThrow(/connectTimeoutMs must be a positive number of ms/);
  });
});
