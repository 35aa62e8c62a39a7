/**
 * Attack on issue 21 §1 through a real service process: SIGTERM while one call is mid-claim (its
 * claim held at the server by another session's uncommitted row) and another is mid-send (the remote
 * answers in 2.5 s), then the database stalls. What must hold: the process ends within
 * `TRISTATE_SHUTDOWN_GRACE_MS` + the margin and nothing is left listening; afterwards a sweeper
 * (another replica, here the in-process service) settles what it left — the sent refund found once,
 * the claimed-but-never-sent one done at most once — no duplicate, no record left PENDING.
 */
import { connect } from "node:net";
import { join } from "node:path";
import { sweepStale } from "@tristate/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SHUTDOWN_MARGIN_MS } from "../src/shutdown.ts";
import { startServiceProcess } from "./processes.ts";
import { type StalledStack, startStalledStack } from "./stalled-stack.ts";

const SLACK_MS = 1000;
const GRACE_MS = 2000;
const config = join(import.meta.dirname, "fixtures/refund.config.ts");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let stack: StalledStack;
beforeAll(async () => {
  stack = await startStalledStack();
});
afterAll(async () => {
  await stack?.close();
});

const args = (order: string) => ({ order_id: order, amount: 10, currency: "EUR", reason: "sigterm" });

describe("attack 21: SIGTERM with calls mid-claim and mid-send, then the database stalls", () => {
  it("exits by grace + margin, nothing listening; the sweepers settle both calls once", async () => {
    const child = await startServiceProcess({
      DATABASE_URL: stack.proxiedUrl,
      TRISTATE_CONFIG: config,
      TEST_REMOTE_URL: stack.remote.url,
      TRISTATE_SHUTDOWN_GRACE_MS: String(GRACE_MS),
      TRISTATE_SWEEP_INTERVAL_MS: "0",
      TRISTATE_ROLLUP_INTERVAL_MS: "0",
    });
    const pool = stack.service.services.store.pool;
    const locker = await pool.connect();
    try {
      const post = (step: string, order: string) =>
        fetch(`${child.url}/trpc/calls.execute`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${stack.agentKey}` },
          body: JSON.stringify({
            runId: "run-sig",
            stepId: step,
            tool: "issue_refund",
            args: args(order),
            budgetMs: 8000,
          }),
        })
          .then(async (r) => ({ status: r.status, body: await r.text() }))
          .catch((e: unknown) => ({ status: 0, body: String(e) }));
      const warm = await post("warm", "S-0");
      expect(warm.status).toBe(200);
      const { rows } = await pool.query<{ key: string }>("SELECT key FROM intent_records WHERE step_id = 'warm'");
      // The claim of step "claim" waits on an uncommitted row under its (run, step, tool).
      await locker.query("BEGIN");
      await locker.query("CREATE TEMP TABLE held ON COMMIT DROP AS SELECT * FROM intent_records WHERE key = $1", [
        rows[0]?.key,
      ]);
      await locker.query("UPDATE held SET key = 'held-key', step_id = 'claim'");
      await locker.query("INSERT INTO intent_records SELECT * FROM held");
      stack.remote.fault({ respondDelayMs: 2500 });
      const postsBefore = stack.remote.posts;
      const midSend = post("send", "S-1");
      while (stack.remote.posts === postsBefore) await sleep(10);
      const midClaim = post("claim", "S-2");
      await sleep(300);
      stack.proxy.stall();
      const started = performance.now();
      const code = await child.stop();
      const tookMs = performance.now() - started;
      console.log(`SIGTERM mid-claim and mid-send, database stalled: exit ${code} after ${Math.round(tookMs)} ms`);
      console.log(
        "agents were told:",
        JSON.stringify(await midSend).slice(0, 300),
        JSON.stringify(await midClaim).slice(0, 300),
      );
      expect(tookMs).toBeLessThan(GRACE_MS + SHUTDOWN_MARGIN_MS + SLACK_MS);
      const refused = await new Promise<boolean>((resolve) => {
        const socket = connect(Number(new URL(child.url).port), "127.0.0.1");
        socket.once("connect", () => {
          socket.destroy();
          resolve(false);
        });
        socket.once("error", () => resolve(true));
      });
      expect(refused, "nothing listening").toBe(true);
    } finally {
      stack.proxy.resume();
      await locker.query("ROLLBACK").catch(() => {});
      locker.release();
      await child.kill();
    }
    // Another replica's sweeper, once the leases have passed.
    await sleep(8000);
    const executor = stack.service.services.executor;
    for (let pass = 0; pass < 4; pass++) {
      await sweepStale({ store: executor.store, executor, budgetMs: 5000 });
      await sleep(300);
    }
    const records = await pool.query<{ step_id: string; status: string; needs_human: boolean }>(
      "SELECT step_id, status, needs_human FROM intent_records WHERE run_id = 'run-sig' AND step_id IN ('send', 'claim')",
    );
    console.log("after the sweepers:", JSON.stringify(records.rows));
    const effectsOf = (order: string) => stack.remote.effects.filter((e) => e.body.order_id === order).length;
    expect(effectsOf("S-1"), "the sent refund, once").toBe(1);
    expect(effectsOf("S-2"), "the claimed refund, at most once").toBeLessThanOrEqual(1);
    for (const r of records.rows) {
      expect(r.status === "PENDING", `${r.step_id} left PENDING`).toBe(false);
      if (r.status === "SUCCEEDED") expect(effectsOf(r.step_id === "send" ? "S-1" : "S-2")).toBe(1);
      if (r.status === "FAILED_NO_EFFECT") expect(effectsOf(r.step_id === "send" ? "S-1" : "S-2")).toBe(0);
    }
  }, 90_000);
});
