/**
 * Issue 21 §1 on real PostgreSQL: the turn's deadline covers the executor's own waits. A TCP proxy
 * between the executor and PostgreSQL stops forwarding (connections left open, as a stalled database
 * or a black-holed route leaves them), or another session holds a lock the claim needs. Before the fix
 * the claim was awaited with no bound: answers came long after the turn, and the send followed the
 * claim — refunds went out after their deadline.
 *
 * What must hold, counted at the remote and in what the agent is told: every call answers by its
 * deadline minus the reserve; no request reaches the remote after its deadline (`Request-Deadline`);
 * an answer is never a lie (SUCCEEDED only with the effect at the remote; UNKNOWN whenever the
 * outcome could not be recorded); and the agent, following the answer's message (the same step again
 * in a new turn), ends with exactly one effect per step.
 */
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import {
  callHttp,
  createExecutor,
  DEFAULT_RESERVE_MS,
  Deadline,
  defineTool,
  type Envelope,
  REQUEST_DEADLINE_HEADER,
} from "@tristate/core";
import { startTcpProxy, type TcpProxy } from "@tristate/testing/tcp-proxy";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { createTestDatabase } from "../../src/test-database.ts";
import { Cleanup } from "./helpers.ts";

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

/** How late (ms) an answer may come after deadline minus reserve: the event loop's own delay on a loaded machine. */
const ANSWER_TOLERANCE_MS = 250;
const BUDGET_MS = 4000;

interface Arrival {
  key: string;
  atEpochMs: number;
  deadlineEpochMs: number;
}

/** A refund remote: every POST commits one effect under its key; `onRequest` runs before it answers. */
async function refundRemote(onRequest: () => void = () => {}) {
  const arrivals: Arrival[] = [];
  const server = http.createServer((req, res) => {
    const atEpochMs = Date.now();
    req.resume();
    req.on("end", () => {
      arrivals.push({
        key: String(req.headers["idempotency-key"]),
        atEpochMs,
        deadlineEpochMs: Number(req.headers[REQUEST_DEADLINE_HEADER.toLowerCase()]),
      });
      onRequest();
      res.writeHead(201, { "content-type": "application/json" }).end(JSON.stringify({ id: `re_${arrivals.length}` }));
    });
  });
  cleanup.server(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/refunds`, arrivals };
}

/** A fresh database, reached through a proxy that can stall; the executor's store goes through it. */
async function setUp(onRequest?: (proxy: TcpProxy) => void) {
  const db = cleanup.add(await createTestDatabase(), (d) => d.drop());
  const direct = new URL(db.url);
  const proxy = cleanup.add(await startTcpProxy({ targetPort: Number(direct.port || 5432) }), (p) => p.close());
  const viaProxy = new URL(db.url);
  viaProxy.port = String(proxy.port);
  const store = cleanup.add(new PrismaIntentStore({ databaseUrl: viaProxy.toString() }), (s) => s.close());
  const remote = await refundRemote(() => onRequest?.(proxy));
  const refund = defineTool({
    name: "payments.refund",
    kind: "unsafe",
    args: z.object({ orderId: z.string() }),
    identity: { orderId: (v) => String(v) },
    timeoutMs: 1500,
    invoke: async (args, ctx) => (await callHttp(ctx, { method: "POST", url: remote.url, body: args })).body,
  });
  const lateErrors: unknown[] = [];
  const executor = createExecutor({
    store,
    tools: [refund],
    onBackgroundWriteError: (error) => lateErrors.push(error),
  });
  return { db, proxy, store, remote, executor, lateErrors };
}

type Setup = Awaited<ReturnType<typeof setUp>>;

/** One call with a fresh budget; what the agent was told and when, against its deadline. */
async function callTimed(s: Setup, step: string, budgetMs = BUDGET_MS) {
  const deadline = Deadline.after(budgetMs);
  const envelope: Envelope = await s.executor.call({
    runId: "run-stall",
    stepId: step,
    tool: "payments.refund",
    args: { orderId: `A-${step}` },
    deadline,
  });
  return { envelope, lateByMs: Date.now() - (deadline.epochMs - DEFAULT_RESERVE_MS) };
}

/** The invariants after the dust settled: no send after its deadline, at most one effect per key. */
function expectNoLateSendNoDuplicate(s: Setup) {
  for (const a of s.remote.arrivals)
    expect(a.atEpochMs, `request ${a.key} after its deadline`).toBeLessThan(a.deadlineEpochMs);
  const keys = s.remote.arrivals.map((a) => a.key);
  expect(new Set(keys).size, "one effect per key").toBe(keys.length);
}

describe("issue 21 §1: the deadline covers the executor's own waits (PostgreSQL through a stalling proxy)", () => {
  it("a stalled claim: every call answers UNKNOWN by deadline − reserve, nothing is ever sent for it; the same step again does it once", async () => {
    const s = await setUp();
    await callTimed(s, "warm"); // connections open, statements prepared
    s.proxy.stall();
    const steps = Array.from({ length: 8 }, (_, i) => `s${i}`);
    const answers = await Promise.all(steps.map((step) => callTimed(s, step)));
    for (const { envelope, lateByMs } of answers) {
      expect(lateByMs).toBeLessThanOrEqual(ANSWER_TOLERANCE_MS);
      expect(envelope).toMatchObject({ status: "UNKNOWN", retry_safe: false, error: { code: "INTENT_LOG_TIMEOUT" } });
      expect(envelope.action_taken).toMatch(/nothing was sent/);
    }
    // The database comes back after every turn has ended: the claims commit, and nothing is sent for them.
    await new Promise((r) => setTimeout(r, BUDGET_MS));
    s.proxy.resume();
    await s.executor.outcomesWritten();
    expect(s.remote.arrivals).toHaveLength(1); // the warm-up only
    for (const step of steps) {
      const record = await s.store.get(
        s.executor.keyFor({
          runId: "run-stall",
          stepId: step,
          tool: "payments.refund",
          args: { orderId: `A-${step}` },
        }),
      );
      expect(record?.status ?? "absent", step).toMatch(/^(FAILED_NO_EFFECT|absent)$/);
    }
    // The agent follows the message: the same step in a new turn. Each refund happens exactly once.
    for (const step of steps) expect((await callTimed(s, step)).envelope.status).toBe("SUCCEEDED");
    expect(s.remote.arrivals).toHaveLength(1 + steps.length);
    expectNoLateSendNoDuplicate(s);
  }, 30_000);

  it("a stalled outcome write: SUCCEEDED by deadline − reserve (the effect is at the remote), written once the database is back", async () => {
    let stallArmed = false;
    const s = await setUp((proxy) => {
      if (!stallArmed) return;
      stallArmed = false;
      proxy.stall(); // the request is in: the outcome write that follows meets a stalled database
    });
    await callTimed(s, "warm");
    stallArmed = true;
    const { envelope, lateByMs } = await callTimed(s, "w1");
    expect(lateByMs).toBeLessThanOrEqual(ANSWER_TOLERANCE_MS);
    expect(envelope.status).toBe("SUCCEEDED");
    expect(s.remote.arrivals.map((a) => a.key)).toContain(envelope.idempotency_key);
    s.proxy.resume();
    await s.executor.outcomesWritten();
    expect((await s.store.get(envelope.idempotency_key))?.status).toBe("SUCCEEDED");
    expect((await callTimed(s, "w1")).envelope).toMatchObject({ status: "SUCCEEDED", replayed: true });
    expectNoLateSendNoDuplicate(s);
  }, 30_000);

  it("a claim held 3 s by a lock with 2 s to answer: answered in time, and the claim that commits later sends nothing", async () => {
    const s = await setUp();
    await callTimed(s, "warm");
    const locker = cleanup.add(new pg.Client({ connectionString: s.db.url }), (c) => c.end());
    await locker.connect();
    await locker.query("BEGIN; LOCK TABLE intent_records IN ACCESS EXCLUSIVE MODE");
    const release = setTimeout(() => void locker.query("COMMIT"), 3000);
    cleanup.add(release, clearTimeout);
    const { envelope, lateByMs } = await callTimed(s, "locked");
    expect(lateByMs).toBeLessThanOrEqual(ANSWER_TOLERANCE_MS);
    expect(envelope).toMatchObject({ status: "UNKNOWN", error: { code: "INTENT_LOG_TIMEOUT" } });
    await s.executor.outcomesWritten();
    expect(s.remote.arrivals).toHaveLength(1); // the warm-up only
    expect(await s.store.get(envelope.idempotency_key)).toMatchObject({
      status: "FAILED_NO_EFFECT",
      error: { code: "DEADLINE_EXCEEDED" },
    });
    // The timeline shows no send: the refusal came right before it would have started.
    const types = (await s.store.listEvents(envelope.idempotency_key)).map((e) => e.type);
    expect(types).toContain("outcome");
    expect(types).not.toContain("sent");
    expectNoLateSendNoDuplicate(s);
  }, 30_000);
});
