/**
 * The executor's own transient failures (issue 12): a database backend terminated in the middle of a
 * call reaches the agent as 503 with `Retry-After` and the advice to repeat the same call, never as
 * 500; repeating it as advised never makes a second effect. On the real PostgreSQL: the outcome write
 * is held on a table lock after the remote committed, and its backend is terminated while it waits.
 */

import { isTransientDatabaseError } from "@tristate/db";
import { refundTool } from "@tristate/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Json, startStack, type TestStack } from "./support.ts";

/** A connection of the service's own pool, kept aside to hold the lock. */
type Locker = { query(text: string, values?: unknown[]): Promise<unknown>; release(): void; pid: number };

/** Starts a stack whose refund locks the log after the remote committed (when its reason is "lock"). */
async function lockingStack(background: boolean): Promise<{ stack: TestStack; locker: Locker }> {
  let locker: Locker | undefined;
  const stack = await startStack({
    env: {
      TRISTATE_PROBE_SPACING_MS: "0",
      TRISTATE_PROBE_ATTEMPTS: "1",
      TRISTATE_BACKGROUND_OUTCOMES: String(background),
    },
    tools: (remote) => {
      const base = refundTool(remote);
      return [
        {
          ...base,
          // After the remote committed: lock the log, so the outcome write waits where the test kills it.
          invoke: async (args: never, ctx: never) => {
            const out = await base.invoke(args, ctx);
            if ((args as { reason?: string }).reason === "lock") {
              await locker!.query("BEGIN");
              // The table (every statement waits) or only the call's row (reads go on; its write waits).
              if (background)
                await locker!.query("SELECT 1 FROM intent_records WHERE key = $1 FOR UPDATE", [
                  (ctx as { idempotencyKey: string }).idempotencyKey,
                ]);
              else await locker!.query("LOCK TABLE intent_records IN ACCESS EXCLUSIVE MODE");
            }
            return out;
          },
        },
      ];
    },
  });
  const client = await stack.service.services.store.pool.connect();
  // Its own pid, so the kill below never takes it: its LOCK TABLE may itself wait (a rollup's read).
  const pid = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]?.pid ?? -1;
  locker = Object.assign(client, { pid });
  return { stack, locker };
}

/** Terminates the backend that waits on the test's lock, then releases the lock. */
async function killWaiter(stack: TestStack, locker: Locker): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const { rows } = await stack.service.services.store.pool
      .query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid() AND pid <> $1",
        [locker.pid],
      )
      .catch(() => ({ rows: [] as { pid: number }[] }));
    if (rows.length > 0) {
      await locker.query("SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid", [rows.map((r) => r.pid)]);
      await locker.query("ROLLBACK");
      return rows.length;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  await locker.query("ROLLBACK");
  return 0;
}

/** Repeats the call as an agent told to (same run, step and arguments) until SUCCEEDED; the last envelope. */
async function repeatUntilSettled(stack: TestStack, call: object, args: object): Promise<Json> {
  let env: Json;
  for (let i = 0; i < 60; i++) {
    const again = await stack.post("calls.execute", { ...call, args });
    expect([200, 503]).toContain(again.status);
    env = again.json.result?.data;
    if (env?.status === "SUCCEEDED") break;
    await new Promise((r) => setTimeout(r, 250));
  }
  return env;
}

describe("transient database failures (503, Retry-After, repeat the same call)", () => {
  let stack: TestStack;
  let locker: Locker;
  beforeAll(async () => {
    ({ stack, locker } = await lockingStack(false));
  }, 60_000);
  afterAll(async () => {
    locker?.release();
    await stack?.close();
  });

  it("a backend terminated mid-call is 503 with Retry-After and the advice; the repeat makes no second effect", async () => {
    const call = { runId: "run-503", stepId: "refund", tool: "issue_refund", budgetMs: 4000 };
    const args = { order_id: "T-1", amount: "20.00", reason: "lock" };
    const [res, killed] = await Promise.all([
      stack.post("calls.execute", { ...call, args }),
      killWaiter(stack, locker),
    ]);
    expect(killed).toBeGreaterThan(0);
    expect(res.status, JSON.stringify(res.json)).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(res.json.error.message).toMatch(/repeat the same call/);
    expect(res.json.error.data.detail).toMatchObject({ retryAfterMs: 1000, retrySame: true });
    expect(stack.remote.effects).toHaveLength(1);

    // The agent repeats the same call as advised, as often as it is told to wait.
    expect(await repeatUntilSettled(stack, call, { ...args, reason: "again" })).toMatchObject({ status: "SUCCEEDED" });
    expect(stack.remote.effects).toHaveLength(1);
  });

  it("recognises the failures of a lost connection, and nothing else", () => {
    const transient = [
      Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" }),
      new Error("Connection terminated unexpectedly"),
      Object.assign(new Error("x"), { code: "08006" }),
      new TypeError("fetch failed", { cause: Object.assign(new Error("connect"), { code: "ECONNREFUSED" }) }),
      Object.assign(new Error("Timed out fetching a new connection from the connection pool"), { code: "P2024" }),
      Object.assign(new Error("could not serialize access"), { code: "40001" }),
    ];
    for (const e of transient) expect(isTransientDatabaseError(e), String(e)).toBe(true);
    const permanent = [
      Object.assign(new Error('duplicate key value violates unique constraint "x"'), { code: "23505" }),
      Object.assign(new Error("invalid input value for enum"), { code: "22P02" }),
      new Error("boom"),
      null,
      "text",
    ];
    for (const e of permanent) expect(isTransientDatabaseError(e), String(e)).toBe(false);
  });
});

describe("an outcome write lost in the background (TRISTATE_BACKGROUND_OUTCOMES, the default)", () => {
  let stack: TestStack;
  let locker: Locker;
  beforeAll(async () => {
    ({ stack, locker } = await lockingStack(true));
  }, 60_000);
  afterAll(async () => {
    locker?.release();
    await stack?.close();
  });

  it("the agent is told SUCCEEDED at once; a read meanwhile is bounded; the killed write is tried again and lands; one effect", async () => {
    const call = { runId: "run-bg", stepId: "refund", tool: "issue_refund", budgetMs: 4000 };
    const args = { order_id: "T-2", amount: "20.00", reason: "lock" };
    // Answered while the outcome write still waits on the lock: the claim was the only write waited for.
    const res = await stack.post("calls.execute", { ...call, args });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(res.json.result.data).toMatchObject({ status: "SUCCEEDED", replayed: false });
    // A read while that write is stuck waits a bounded time, then shows what the log holds (never hangs).
    const stuck = await stack.get("calls.get", { key: res.json.result.data.idempotency_key });
    expect(stuck.status).toBe(200);
    expect(stuck.json.result.data).toMatchObject({ status: "PENDING" });
    expect(await killWaiter(stack, locker)).toBeGreaterThan(0);
    // The killed write is tried again and lands: the log says what the agent was told, no probe needed.
    const key = res.json.result.data.idempotency_key;
    await stack.service.services.tenants.outcomesWritten();
    const { rows } = await stack.service.services.store.pool.query<{ status: string; resolution: string | null }>(
      "SELECT status, resolution FROM intent_records WHERE key = $1",
      [key],
    );
    expect(rows).toEqual([{ status: "SUCCEEDED", resolution: null }]);
    const settled = await repeatUntilSettled(stack, call, { ...args, reason: "again" });
    expect(settled).toMatchObject({ status: "SUCCEEDED", idempotency_key: key });
    expect(stack.remote.effects).toHaveLength(1);
  });
});
