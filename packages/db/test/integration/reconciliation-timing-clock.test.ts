/**
 * Issue 9 §4 "Leases are judged by one clock, and late proof is kept" (DESIGN.md rules 2, 9, 10):
 * two executor replicas — each with its own pool — on one real PostgreSQL database, whose clocks
 * disagree by 60 s, against a real loopback remote that holds its answer ~1.2–1.5 s.
 */
import { Deadline, type Envelope, type Executor } from "@tristate/core";
import { type FakeRemote, refundTool, startFakeRemote } from "@tristate/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { createTestDatabase, type TestDatabase } from "../../src/test-database.ts";
import { Cleanup, sleep, waitUntil } from "./helpers.ts";
import { eventTypes, mustGet, refund, skewedClock, sweepKey, timingExecutor } from "./reconciliation-timing.support.ts";

const SKEW_MS = 60_000;
/** Lease of the in-flight call (its deadline), by its own replica's clock. */
const LEASE_MS = 10_000;

describe("issue 9 §4: leases judged by the database's clock; late answers settle (real PostgreSQL, two replicas)", () => {
  const files = new Cleanup();
  const cleanup = new Cleanup();
  let db: TestDatabase;
  /** Replica A's and replica B's stores: separate pools on the same database. */
  let storeA: PrismaIntentStore;
  let storeB: PrismaIntentStore;
  let remote: FakeRemote;
  let n = 0;

  beforeAll(async () => {
    db = files.add(await createTestDatabase(), (d) => d.drop());
    storeA = files.add(new PrismaIntentStore({ databaseUrl: db.url, poolSize: 4 }), (s) => s.close());
    storeB = files.add(new PrismaIntentStore({ databaseUrl: db.url, poolSize: 4 }), (s) => s.close());
  });
  afterAll(() => files.run());
  afterEach(() => cleanup.run());

  /** Starts a call on `executor` (deadline by its own clock) and tracks whether it has answered. */
  function startCall(executor: Executor) {
    const i = ++n;
    const input = { runId: `run-clock-${i}`, stepId: "step-1", tool: "issue_refund", args: refund(`C-${i}`) };
    const key = executor.keyFor(input);
    const state: { answered: boolean; envelope: Promise<Envelope> } = { answered: false, envelope: null as never };
    state.envelope = executor.call({ ...input, deadline: Deadline.after(LEASE_MS, executor.clock) }).finally(() => {
      state.answered = true;
    });
    return { input, key, state };
  }

  it("replica B (clock 60 s ahead) during A's in-flight call: its sweeper takes nothing, its reconcile and repeat call answer UNKNOWN in flight and change nothing; A's 201 settles SUCCEEDED, 1 effect, never in the human queue", async () => {
    remote = cleanup.add(await startFakeRemote(), (r) => r.close());
    const tool = refundTool(remote, { timeoutMs: 3000 });
    const A = timingExecutor(storeA, [tool]);
    const B = timingExecutor(storeB, [tool], { clock: skewedClock(SKEW_MS) });
    remote.fault({ respondDelayMs: 1500 });

    const call = startCall(A);
    await waitUntil(() => remote.posts === 1, "A's request at the remote");
    await sleep(100);
    const before = await mustGet(storeB, call.key);
    const eventsBefore = await storeB.listEvents(call.key);
    expect(before).toMatchObject({ status: "PENDING", attempt: 1 });
    // By B's clock the lease passed 50 s ago; by the database's it has ~9.8 s to run.
    expect(B.clock.nowEpochMs()).toBeGreaterThan(before.leaseUntilEpochMs);

    expect(await sweepKey(storeB, B, call.key)).toBeUndefined();
    const reconciled = await B.reconcileKey(call.key, Deadline.after(30_000, B.clock), "sweeper");
    expect(reconciled).toMatchObject({ status: "UNKNOWN", retry_safe: false, error: { code: "IN_FLIGHT" } });
    const repeat = await B.call({ ...call.input, deadline: Deadline.after(LEASE_MS, B.clock) });
    expect(repeat).toMatchObject({
      status: "UNKNOWN",
      retry_safe: false,
      replayed: true,
      idempotency_key: call.key,
      error: { code: "IN_FLIGHT" },
    });
    expect(call.state.answered, "A's call must still be in flight for these checks").toBe(false);
    expect(await mustGet(storeB, call.key)).toEqual(before);
    expect(await storeB.listEvents(call.key)).toEqual(eventsBefore);
    expect(remote.posts).toBe(1);
    expect(remote.probes).toBe(0);

    const env = await call.state.envelope;
    expect(env).toMatchObject({ status: "SUCCEEDED", retry_safe: true, replayed: false, attempt: 1 });
    expect(remote.effects).toHaveLength(1);
    expect(remote.posts).toBe(1);
    const done = await mustGet(storeA, call.key);
    expect(done).toMatchObject({ status: "SUCCEEDED", needsHuman: false, resolution: null, error: null });
    expect(done.result).toMatchObject({ id: remote.effects[0]!.id });
    expect(await eventTypes(storeA, call.key)).toEqual(["created", "sent", "outcome"]);
  });

  it("late proof: A's clock runs 60 s behind, so its lease is past by the database's clock; the sweeper takes the record and sends it to the human queue; A's 201 then arrives → late_answer kept, SUCCEEDED found, out of the human queue, 1 effect", async () => {
    remote = cleanup.add(await startFakeRemote({ honorsKey: false }), (r) => r.close());
    // An unsafe refund with only an identity probe and no settle window: absent → the human queue.
    const tool = refundTool(remote, { kind: "unsafe", probe: undefined, timeoutMs: 3000 });
    const A = timingExecutor(storeA, [tool], { clock: skewedClock(-SKEW_MS) });
    const sweeper = timingExecutor(storeB, [tool]);
    // Committed at once but hidden from lookups, and answered only after 1.2 s.
    remote.fault({ respondDelayMs: 1200, visibleAfterMs: 10_000 });

    const call = startCall(A);
    await waitUntil(() => remote.posts === 1, "A's request at the remote");
    await sleep(100);
    const pending = await mustGet(storeB, call.key);
    expect(pending.status).toBe("PENDING");
    expect(pending.leaseUntilEpochMs).toBeLessThan(await storeB.clockEpochMs());

    const swept = await sweepKey(storeB, sweeper, call.key);
    expect(swept?.envelope).toMatchObject({
      status: "UNKNOWN",
      retry_safe: false,
      resolution: "needs_human",
      error: { code: "PROBES_ABSENT_NO_DEDUPE" },
    });
    expect(call.state.answered, "A's answer must arrive after the takeover").toBe(false);
    expect(await mustGet(storeB, call.key)).toMatchObject({ status: "UNKNOWN", needsHuman: true });

    const env = await call.state.envelope;
    expect(env).toMatchObject({ status: "SUCCEEDED", resolution: "found", retry_safe: true, attempt: 1 });
    const done = await mustGet(storeB, call.key);
    expect(done).toMatchObject({
      status: "SUCCEEDED",
      resolution: "found",
      needsHuman: false,
      error: null,
      attempt: 1,
    });
    expect(done.result).toMatchObject({ id: remote.effects[0]!.id });
    expect(remote.effects).toHaveLength(1);
    expect(remote.posts).toBe(1);
    const events = await storeB.listEvents(call.key);
    const types = events.map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(["lease_expired", "needs_human", "late_answer"]));
    expect(types.indexOf("late_answer")).toBeGreaterThan(types.indexOf("needs_human"));
    expect(events.find((e) => e.type === "late_answer")!.data).toMatchObject({
      attempt: 1,
      outcome: "SUCCEEDED",
      currentStatus: "UNKNOWN",
    });
    // Nothing left for the sweeper, and the agent's repeat call replays the settled record.
    expect(await sweepKey(storeB, sweeper, call.key)).toBeUndefined();
    const replay = await sweeper.call({ ...call.input, deadline: Deadline.after(LEASE_MS) });
    expect(replay).toMatchObject({ status: "SUCCEEDED", replayed: true });
    expect(remote.posts).toBe(1);
  });

  it("late proof after a same-key resend: the sweeper (lease past by the database's clock) resends while A's original is still in flight, the remote answers 409 in progress, then A's 201 settles the record: SUCCEEDED found, 1 effect", async () => {
    remote = cleanup.add(await startFakeRemote(), (r) => r.close());
    const tool = refundTool(remote, { timeoutMs: 3000 });
    const A = timingExecutor(storeA, [tool], { clock: skewedClock(-SKEW_MS) });
    const sweeper = timingExecutor(storeB, [tool]);
    remote.fault({ respondDelayMs: 1200, visibleAfterMs: 10_000 });

    const call = startCall(A);
    await waitUntil(() => remote.posts === 1, "A's request at the remote");
    await sleep(100);
    const swept = await sweepKey(storeB, sweeper, call.key);
    // Probes found nothing (hidden), the keyed tool resent with the same key, the remote said 409:
    // a refused resend proves nothing about the original, so a person would decide (rule 5f)…
    expect(swept?.envelope).toMatchObject({
      status: "UNKNOWN",
      retry_safe: false,
      attempt: 2,
      resolution: "needs_human",
      error: { code: "RESEND_REFUSED", httpStatus: 409 },
    });
    expect(remote.posts).toBe(2);
    expect(new Set(remote.keysSeen)).toEqual(new Set([call.key]));
    expect(call.state.answered).toBe(false);

    // …until A's late 201 arrives and settles it (rule 10).
    const env = await call.state.envelope;
    expect(env).toMatchObject({ status: "SUCCEEDED", resolution: "found" });
    expect(await mustGet(storeB, call.key)).toMatchObject({
      status: "SUCCEEDED",
      resolution: "found",
      needsHuman: false,
    });
    expect(remote.effects).toHaveLength(1);
    const late = (await storeB.listEvents(call.key)).find((e) => e.type === "late_answer");
    expect(late?.data).toMatchObject({ attempt: 1, outcome: "SUCCEEDED", currentStatus: "UNKNOWN" });
  });
});
