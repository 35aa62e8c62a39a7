/**
 * Attack on issue 21 §1 through the service: `runs.abort` carries the agent's turn (`budgetMs` or
 * `deadlineEpochMs`), and the promise is "every answer within its turn's deadline". The key check is
 * bounded (context.ts), every tool call is bounded (answer-by.ts) — the abort was not: its statements
 * (the `run_aborts` insert, the run's records, the notes on originals) waited as long as the database
 * made them, up to the pool's `statement_timeout` (30 s) or `query_timeout` (32 s).
 *
 * Reproduced with a lock another session holds on `run_aborts` (the key check reads `api_keys`, so it
 * passes at once): an abort with a 4 s budget was answered when the lock went, 8 s later. Fixed
 * (abort-in-tenant.ts): 503 with `Retry-After` by the budget minus the reserve while the abort goes
 * on; the same abort repeated once the database answers reports it (recorded once).
 */
import { DEFAULT_RESERVE_MS } from "@tristate/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type StalledStack, startStalledStack } from "./stalled-stack.ts";

/** Slack for a loaded 2-core machine on top of the bound, ms. */
const SLACK_MS = 500;
/** How long the lock on `run_aborts` is held, ms. */
const HELD_MS = 6000;

let stack: StalledStack;
beforeAll(async () => {
  stack = await startStalledStack();
});
afterAll(async () => {
  await stack?.close();
});

const abort = (budgetMs: number) =>
  fetch(`${stack.service.url}/trpc/runs.abort`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${stack.agentKey}` },
    body: JSON.stringify({ runId: "run-stall", reason: "user cancelled", budgetMs }),
  });

describe("attack 21: runs.abort and the turn's deadline", () => {
  it("runs.abort with a 4 s budget answers within the budget minus the reserve while run_aborts is locked; repeated later, it reports the abort", async () => {
    const warm = await stack.execute({ stepId: "warm", budgetMs: 10_000 });
    expect(warm.status).toBe(200);
    const locker = await stack.service.services.store.pool.connect();
    try {
      await locker.query("BEGIN; LOCK TABLE run_aborts IN ACCESS EXCLUSIVE MODE");
      const release = setTimeout(() => void locker.query("COMMIT"), HELD_MS);
      const budgetMs = 4000;
      const started = performance.now();
      const res = await abort(budgetMs);
      const tookMs = performance.now() - started;
      const body = (await res.json()) as { error?: { message: string } };
      console.log(
        `runs.abort (budget ${budgetMs} ms, run_aborts locked): HTTP ${res.status} after ${Math.round(tookMs)} ms`,
      );
      expect(tookMs).toBeLessThan(budgetMs - DEFAULT_RESERVE_MS + SLACK_MS);
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("1");
      expect(body.error?.message).toMatch(/repeat runs.abort/);
      // The database answers again: the same abort, repeated, reports the run aborted once.
      await new Promise((r) => setTimeout(r, HELD_MS + 500 - tookMs));
      clearTimeout(release);
      const again = await abort(10_000);
      expect(again.status).toBe(200);
      const report = ((await again.json()) as { result: { data: { runId: string; steps: { stepId: string }[] } } })
        .result.data;
      expect(report.runId).toBe("run-stall");
      expect(report.steps.map((s) => s.stepId)).toContain("warm");
      const { rows } = await stack.service.services.store.pool.query(
        "SELECT count(*)::int AS n FROM run_aborts WHERE run_id = 'run-stall'",
      );
      expect(rows[0]?.n).toBe(1);
    } finally {
      await locker.query("COMMIT").catch(() => {});
      locker.release();
    }
  }, 30_000);
});
