/**
 * Attack on issue 21 §1 × rule 10 on real PostgreSQL, two replicas. Replica A's claim is held up past
 * its answer time (A answers UNKNOWN "nothing was sent by this call"); it commits while A's own
 * connection is stalled, so A learns of it only later. Meanwhile the lease passes, the agent repeats
 * the step on replica B (as A's answer told it to), B takes the record over and resends under the same
 * key (same attempt): the remote commits and B's request times out — UNKNOWN, an effect may exist.
 * Then A's connection comes back: A's send is refused (its deadline passed) and its FAILED_NO_EFFECT
 * `DEADLINE_EXCEEDED` write loses the compare-and-set, so it is handled as a late answer (late-answer.ts):
 * "no effect settles an UNKNOWN record when no other attempt was sent since", judged by the attempt
 * number. Holds: a reconciliation's resend takes a new attempt number (attempt 2), so A's late answer
 * (attempt 1) is kept as a `late_answer` event and decides nothing.
 *
 * What must hold: a record with an effect at the remote is never settled FAILED_NO_EFFECT (the agent
 * would be told `retry_safe: true` and a new attempt would refund twice).
 */
import { createExecutor, Deadline, type Envelope } from "@tristate/core";
import { refundTool, startFakeRemote } from "@tristate/testing";
import { startTcpProxy } from "@tristate/testing/tcp-proxy";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { createTestDatabase } from "../../src/test-database.ts";
import { Cleanup } from "./helpers.ts";

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ARGS = { order_id: "L-1", amount: 10, currency: "EUR", reason: "late" };

describe("attack 21: a claim that commits late, a takeover, and the late 'not sent'", () => {
  it("A's late 'not sent' never settles FAILED_NO_EFFECT a record B's same-key resend may have done", async () => {
    const db = cleanup.add(await createTestDatabase(), (d) => d.drop());
    const proxyA = cleanup.add(await startTcpProxy({ targetPort: Number(new URL(db.url).port || 5432) }), (p) =>
      p.close(),
    );
    const viaProxy = new URL(db.url);
    viaProxy.port = String(proxyA.port);
    const storeA = cleanup.add(new PrismaIntentStore({ databaseUrl: viaProxy.toString() }), (s) => s.close());
    const storeB = cleanup.add(new PrismaIntentStore({ databaseUrl: db.url }), (s) => s.close());
    const remote = cleanup.add(await startFakeRemote({ honorsKey: false }), (r) => r.close());
    const tool = () => refundTool(remote, { kind: "unsafe", settleMs: 100, probeByIdentity: undefined });
    const probe = { spacingMs: 50, timeoutMs: 500, attempts: 2 };
    const exA = createExecutor({ store: storeA, tools: [tool()], probe });
    const exB = createExecutor({ store: storeB, tools: [tool()], probe });
    const call = (ex: typeof exA, budgetMs: number) =>
      ex.call({
        runId: "run-late",
        stepId: "refund",
        tool: "issue_refund",
        args: ARGS,
        deadline: Deadline.after(budgetMs),
      });

    const warm = await exA.call({
      runId: "run-late",
      stepId: "warm",
      tool: "issue_refund",
      args: { ...ARGS, order_id: "W-1" },
      deadline: Deadline.after(5000),
    });
    expect(warm.status).toBe("SUCCEEDED");
    const effectsBefore = remote.effects.length;

    // An uncommitted row under the step's (run, step, tool) holds A's claim at the server.
    const locker = cleanup.add(new pg.Client({ connectionString: db.url }), (c) => c.end());
    await locker.connect();
    await locker.query("BEGIN");
    await locker.query("CREATE TEMP TABLE held ON COMMIT DROP AS SELECT * FROM intent_records WHERE key = $1", [
      warm.idempotency_key,
    ]);
    await locker.query("UPDATE held SET key = 'held-key', step_id = 'refund'");
    await locker.query("INSERT INTO intent_records SELECT * FROM held");
    const leaseA = Date.now() + 3500;
    const answerA = await call(exA, 3500);
    expect(answerA).toMatchObject({ status: "UNKNOWN", error: { code: "INTENT_LOG_TIMEOUT" } });
    proxyA.stall(); // A's connection goes quiet…
    await locker.query("ROLLBACK"); // …as its claim commits at the server
    await sleep(Math.max(0, leaseA - Date.now()) + 300);

    // The agent repeats the step on B; B takes the record over and (once absence is conclusive) resends.
    remote.fault({ answer: "hang" }); // B's resend commits at the remote, and its answer never comes
    const toldB: Envelope[] = [];
    for (let i = 0; i < 6 && remote.posts === effectsBefore; i++) {
      toldB.push(await call(exB, 10_000));
      if (remote.posts === effectsBefore) await sleep(500);
    }
    expect(remote.effects.length - effectsBefore, "B's resend reached the remote").toBe(1);
    expect(toldB.at(-1)?.status).toBe("UNKNOWN");

    proxyA.resume(); // A hears of its claim, refuses to send (late), and writes "not sent"
    await exA.outcomesWritten();
    await exA.lateEvidenceWeighed();
    const record = await storeB.get(answerA.idempotency_key);
    console.log("record after A's late 'not sent':", record?.status, record?.error?.code, record?.resolution);
    expect(record?.status, "settled 'no effect' with an effect at the remote").not.toBe("FAILED_NO_EFFECT");

    // The agent goes on as told: one refund in the end.
    remote.fault({});
    const later = await call(exB, 10_000);
    await exB.outcomesWritten();
    console.log("B later:", later.status, later.error?.code ?? "", later.resolution ?? "");
    expect(remote.effects.length - effectsBefore, "exactly one refund").toBe(1);
  }, 60_000);
});
