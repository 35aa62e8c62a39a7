/**
 * Crash recovery on the real PostgreSQL: an executor in a separate Node process is SIGKILLed at an
 * injected point of `executor.call`, and a "restarted" executor in this process recovers the orphaned
 * PENDING record — by the sweeper, or by the agent's repeat call — with exactly one effect at the remote.
 */
import {
  canonicalIdentity,
  createExecutor,
  Deadline,
  type Executor,
  type IntentStore,
  idempotencyKey,
  sweepStale,
} from "@tristate/core";
import { type FakeRemote, refundTool, startFakeRemote } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { createTestDatabase, type TestDatabase } from "../../src/test-database.ts";
import type { CrashPoint } from "../fixtures/crash-child.ts";
import { Cleanup, sleepPast, spawnChild } from "./helpers.ts";

/** The child's call deadline, which is also the PENDING record's lease. */
const LEASE_MS = 2000;
const RUN_ID = "run-crash";
const STEP_ID = "step-1";
const ARGS = { order_id: "A-1182", amount: "49.90", currency: "EUR", reason: "arrived broken" };

describe("crash recovery: executor process SIGKILLed mid-call, restarted executor recovers (real PostgreSQL)", () => {
  const cleanup = new Cleanup();
  let db: TestDatabase;
  let remote: FakeRemote;
  let store: PrismaIntentStore;

  beforeEach(async () => {
    db = cleanup.add(await createTestDatabase(), (d) => d.drop());
    remote = cleanup.add(await startFakeRemote(), (r) => r.close());
    store = cleanup.add(new PrismaIntentStore({ databaseUrl: db.url, poolSize: 4 }), (s) => s.close());
  });
  afterEach(() => cleanup.run());

  const key = idempotencyKey(RUN_ID, STEP_ID, "issue_refund", canonicalIdentity(ARGS, refundToolIdentity()));

  function restartedExecutor(s: IntentStore = store): Executor {
    return createExecutor({ store: s, tools: [refundTool(remote)], probe: { spacingMs: 100 } });
  }

  const repeatCall = (executor: Executor) =>
    executor.call({
      runId: RUN_ID,
      stepId: STEP_ID,
      tool: "issue_refund",
      args: ARGS,
      deadline: Deadline.after(10_000),
    });

  /** Runs the child to its crash point and checks what it left behind: one PENDING record. */
  async function crashChild(point: CrashPoint) {
    const child = cleanup.add(
      spawnChild(point, {
        databaseUrl: db.url,
        remoteUrl: remote.url,
        runId: RUN_ID,
        stepId: STEP_ID,
        args: ARGS,
        leaseMs: LEASE_MS,
      }),
      (c) => c.kill(),
    );
    const exit = await child.exited;
    expect(exit, child.stderr()).toEqual({ code: null, signal: "SIGKILL" });
    expect(child.stderr()).toContain(`SIGKILL at ${point}`);
    expect(child.lines.map((l) => l.type)).toEqual(["ready"]); // no envelope: it died mid-call

    const record = await store.get(key);
    expect(record).toMatchObject({ status: "PENDING", attempt: 1, resolution: null, version: 1 });
    expect(await store.prisma.intentRecord.count()).toBe(1);
    expect((await store.listEvents(key)).map((e) => e.type)).toEqual(["created"]);
    if (point === "after-pending") {
      expect(remote.posts).toBe(0); // the crash came before the send
      expect(remote.effects).toHaveLength(0);
    } else {
      expect(remote.posts).toBe(1); // sent, and the remote committed the effect
      expect(remote.effects).toHaveLength(1);
    }
    return record!;
  }

  /** Rule 2: a repeat call while the lease runs answers UNKNOWN in flight and changes nothing. */
  async function expectInFlightUntouched(executor: Executor, deadlineEpochMs: number) {
    const before = await store.get(key);
    const eventsBefore = await store.listEvents(key);
    const posts = remote.posts;
    expect(Date.now(), "the lease must still run for this check").toBeLessThan(deadlineEpochMs);
    const env = await repeatCall(executor);
    expect(env).toMatchObject({
      status: "UNKNOWN",
      retry_safe: false,
      replayed: true,
      idempotency_key: key,
      error: { code: "IN_FLIGHT" },
    });
    expect(await store.get(key)).toEqual(before);
    expect(await store.listEvents(key)).toEqual(eventsBefore);
    expect(remote.posts).toBe(posts);
    expect(remote.probes).toBe(0);
  }

  /** After recovery: one effect with the key, the record settled, the timeline as expected. */
  async function expectRecovered(point: CrashPoint) {
    expect(remote.effects).toHaveLength(1);
    expect(remote.posts).toBe(1);
    expect(remote.effects[0]!.clientRef).toBe(key);
    expect(new Set(remote.keysSeen)).toEqual(new Set([key]));
    expect(remote.bodiesSeen[0]).toEqual(ARGS); // the persisted original arguments

    const record = await store.get(key);
    expect(record).toMatchObject({
      status: "SUCCEEDED",
      resolution: point === "after-pending" ? "absent_resent" : "found",
      attempt: point === "after-pending" ? 2 : 1,
      needsHuman: false,
      error: null,
    });
    expect(record!.finishedAtEpochMs).not.toBeNull();

    const events = await store.listEvents(key);
    const types = events.map((e) => e.type);
    const timed = events.filter((e) => e.type === "probe").map((e) => e.data);
    // Each probe's event carries its own time, start → answer (issue 22 §4: the timeline shows it).
    for (const p of timed) expect(p.durationMs).toBeGreaterThanOrEqual(0);
    const probes = timed.map(({ durationMs: _ms, ...rest }) => rest);
    if (point === "after-pending") {
      // 3 spaced rounds × (key probe, identity probe), all absent; then one resend with the same key.
      expect(types).toEqual(["created", "lease_expired", ...Array(6).fill("probe"), "resend", "sent", "outcome"]);
      expect(probes).toEqual(
        [1, 2, 3].flatMap((round) => [
          { probe: "key", round, answer: "absent" },
          { probe: "identity", round, answer: "absent" },
        ]),
      );
      expect(events.find((e) => e.type === "resend")!.data).toMatchObject({ attempt: 2 });
      expect(events.at(-1)!.data).toMatchObject({ outcome: "SUCCEEDED" });
    } else {
      expect(types).toEqual(["created", "lease_expired", "probe", "outcome"]);
      expect(probes).toEqual([{ probe: "key", round: 1, answer: "found" }]);
      expect(events.at(-1)!.data).toEqual({ outcome: "SUCCEEDED", resolution: "found" });
    }
    expect(events.find((e) => e.type === "lease_expired")!.data).toMatchObject({
      previousDeadlineEpochMs: expect.any(Number),
    });
  }

  /** A later repeat call replays the settled record and sends nothing. */
  async function expectReplay(executor: Executor) {
    const posts = remote.posts;
    const env = await repeatCall(executor);
    expect(env).toMatchObject({ status: "SUCCEEDED", replayed: true, retry_safe: true, idempotency_key: key });
    expect(remote.posts).toBe(posts);
    expect(remote.effects).toHaveLength(1);
  }

  const expected = {
    "after-pending": { resolution: "absent_resent", attempt: 2 },
    "after-send": { resolution: "found", attempt: 1 },
  } as const;

  for (const point of ["after-pending", "after-send"] as const) {
    describe(`crash ${point}`, () => {
      it("the sweeper reconciles the orphan after its lease: one effect, SUCCEEDED", async () => {
        const orphan = await crashChild(point);
        const executor = restartedExecutor();
        await expectInFlightUntouched(executor, orphan.leaseUntilEpochMs);

        // Before the lease passes the sweeper takes nothing.
        expect(await sweepStale({ store, executor })).toEqual({ taken: 0, results: [], left: [] });

        await sleepPast(orphan.leaseUntilEpochMs);
        const report = await sweepStale({ store, executor });
        expect(report.taken).toBe(1);
        expect(report.results).toHaveLength(1);
        expect(report.results[0]).toMatchObject({
          key,
          envelope: { status: "SUCCEEDED", retry_safe: true, replayed: false, ...expected[point] },
        });
        await expectRecovered(point);

        // Nothing is left for a second pass.
        expect(await sweepStale({ store, executor })).toEqual({ taken: 0, results: [], left: [] });
        await expectReplay(executor);
      });

      it("the agent's repeat call after the lease reconciles it: one effect, SUCCEEDED", async () => {
        const orphan = await crashChild(point);
        const executor = restartedExecutor();
        await expectInFlightUntouched(executor, orphan.leaseUntilEpochMs);

        await sleepPast(orphan.leaseUntilEpochMs);
        const env = await repeatCall(executor);
        expect(env).toMatchObject({
          status: "SUCCEEDED",
          retry_safe: true,
          replayed: false,
          idempotency_key: key,
          ...expected[point],
        });
        await expectRecovered(point);
        await expectReplay(executor);
      });
    });
  }
});

function refundToolIdentity() {
  // The identity canonicalisers do not depend on the remote.
  return refundTool({ url: "http://127.0.0.1:9" } as FakeRemote).identity;
}
