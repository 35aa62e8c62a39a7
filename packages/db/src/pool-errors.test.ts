/**
 * pool-errors.ts on real PostgreSQL: a backend terminated while its client is checked out and idle
 * between two statements (as an interactive transaction's holder keeps it) must not end the
 * process with an unhandled `error` event; its next query fails, and the pool serves the next one.
 */

import { Cleanup } from "@tristate/testing";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { PrismaIntentStore } from "./prisma-intent-store.ts";
import { createTestDatabase } from "./test-database.ts";

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

describe("survivePoolErrors", () => {
  it("a backend terminated while its client is checked out fails that client, not the process; the pool goes on", async () => {
    const db = cleanup.add(await createTestDatabase(), (d) => d.drop());
    const store = cleanup.add(new PrismaIntentStore({ databaseUrl: db.url }), (s) => s.close());
    const admin = cleanup.add(new pg.Client({ connectionString: db.url }), (c) => c.end());
    await admin.connect();
    const unhandled: unknown[] = [];
    const onUncaught = (error: unknown) => unhandled.push(error);
    process.on("uncaughtException", onUncaught);
    cleanup.add(null, () => process.off("uncaughtException", onUncaught));

    // A client checked out and idle (as a transaction's holder keeps it between two statements).
    const client = await store.pool.connect();
    const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    await admin.query("SELECT pg_terminate_backend($1)", [rows[0]?.pid]);
    // The server's FATAL reaches the client while no query of its own is running.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(unhandled).toEqual([]);
    await expect(client.query("SELECT 1")).rejects.toThrow();
    client.release(true);
    const [after] = await store.prisma.$queryRaw<{ x: number }[]>`SELECT 1 AS x`;
    expect(after?.x).toBe(1);
  });
});
