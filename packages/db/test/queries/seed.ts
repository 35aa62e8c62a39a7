/**
 * The data set of the read-side query tests: real calls through an executor on a PrismaIntentStore
 * against a fake remote with injected faults, plus records claimed directly where the test needs
 * exact times (stale PENDING, the previous period, latencies). `EXPECTED` lists what the queries must say.
 */
import {
  type AnyTool,
  createExecutor,
  Deadline,
  type Envelope,
  type Executor,
  type IntentEvent,
  type IntentPatch,
  type IntentRecord,
  idempotencyKey,
  type NewIntentRecord,
} from "@tristate/core";
import { type FakeRemote, refundTool } from "@tristate/testing";
import { expect } from "vitest";
import type { PrismaIntentStore } from "../../src/prisma-intent-store.ts";

/** Length of the stats window (20 one-minute sparkline slices), ms. */
export const WINDOW_MS = 20 * 60_000;
/** Sparkline slices. */
export const BUCKETS = 20;

/** The seeded data set and its times. */
export interface Seeded {
  /** Wall clock when seeding started, epoch ms. */
  seedStart: number;
  /** The stats window: [from, to), `to` two minutes after `seedStart` so every real call is in slice 18. */
  from: number;
  to: number;
  /** "Now" for stale records: just after `seedStart` (the fresh PENDING record's deadline is far later). */
  staleNow: number;
  /** Catalog timeouts to pass to statsOverview. */
  toolTimeoutsMs: Record<string, number>;
  /** Keys by role in the data set. */
  keys: {
    succeeded: string[];
    found: string[];
    absentResent: string[];
    failed: string[];
    resentThenRefused: string;
    stale: string[];
    freshPending: string;
    needsHuman: string;
    humanConfirmedEffect: string;
    humanConfirmedNoEffect: string;
    unsafeSucceeded: string;
    slow: string[];
    previous: string[];
    beforePrevious: string;
  };
  /** Every record key seeded. */
  allKeys: string[];
}

/** The tools of the data set: the refund tool, and an unsafe variant without probes. */
export function seedTools(remote: FakeRemote): { refund: AnyTool; unsafe: AnyTool } {
  return {
    refund: refundTool(remote),
    unsafe: refundTool(remote, { name: "unsafe_refund", kind: "unsafe", probe: undefined, probeByIdentity: undefined }),
  };
}

/** Claims a record directly (no call), with the given times, and applies `patch` (+ events) if given. */
export async function claimDirect(
  store: PrismaIntentStore,
  spec: {
    tool: string;
    runId: string;
    stepId: string;
    orderId: string;
    createdAt: number;
    deadline: number;
    patch?: IntentPatch;
    events?: (key: string) => IntentEvent[];
    updatedAt?: number;
  },
): Promise<IntentRecord> {
  const args = { order_id: spec.orderId, amount: "10.00", currency: "EUR" };
  const identity = { order_id: spec.orderId.toUpperCase(), amount: "10.00" };
  const key = idempotencyKey(spec.runId, spec.stepId, spec.tool, identity);
  const record: NewIntentRecord = {
    key,
    runId: spec.runId,
    stepId: spec.stepId,
    tool: spec.tool,
    args,
    identity,
    attempt: 1,
    leaseUntilEpochMs: spec.deadline,
    compensation: null,
    createdAtEpochMs: spec.createdAt,
    traceId: `trace${spec.stepId}`.padEnd(32, "0").slice(0, 32),
  };
  const claim = await store.claim(
    record,
    [{ key, type: "created", atEpochMs: spec.createdAt, data: {} }],
    spec.createdAt,
  );
  if (!claim.claimed) throw new Error(`seed: ${key} was already claimed`);
  if (!spec.patch) return claim.record;
  const updated = await store.update(
    key,
    claim.record.version,
    spec.patch,
    spec.events?.(key) ?? [],
    spec.updatedAt ?? spec.createdAt,
  );
  if (!updated) throw new Error(`seed: update of ${key} lost`);
  return updated;
}

/**
 * Seeds the data set (see EXPECTED in stats-overview.test.ts):
 * - issue_refund (real calls, run `run-seed`): 6 SUCCEEDED; 3 UNKNOWN (500 after commit) then found;
 *   2 UNKNOWN (503, nothing committed) then absent → resent; 2 FAILED_NO_EFFECT (422); 1 UNKNOWN then
 *   absent → resend refused (422): still UNKNOWN, waiting for a person (a refusal proves nothing about
 *   the original, DESIGN.md rule 5f). Directly: 2 stale PENDING
 *   (deadlines 60 s and 30 s before `seedStart`), 1 PENDING with a deadline an hour ahead.
 * - unsafe_refund (real calls): 1 SUCCEEDED; 3 UNKNOWN → needs_human, of which an operator (a direct
 *   update, as the operator API would write it) confirms one effect and one no-effect.
 * - slow_export (direct, slice 0): 20 records with outcome durations 5, 10, …, 100 ms; 4 UNKNOWN.
 * - issue_refund in the previous period (direct): 4 records, 1 UNKNOWN; and 1 before it (ignored).
 */
export async function seedDataset(store: PrismaIntentStore, remote: FakeRemote): Promise<Seeded> {
  const seedStart = Date.now();
  const to = seedStart + 120_000;
  const from = to - WINDOW_MS;
  const { refund, unsafe } = seedTools(remote);
  const executor: Executor = createExecutor({
    store,
    tools: [refund, unsafe],
    probe: { attempts: 2, spacingMs: 5, timeoutMs: 1000 },
  });
  let step = 0;
  const call = async (tool: AnyTool, faults: Parameters<FakeRemote["fault"]>): Promise<Envelope> => {
    remote.fault(...faults);
    step++;
    return executor.call({
      runId: "run-seed",
      stepId: `step-${String(step).padStart(3, "0")}`,
      tool: tool.name,
      args: { order_id: `o-${step}`, amount: 10 + step, currency: "EUR" },
      deadline: Deadline.after(15_000),
    });
  };
  const expectEnvelope = (e: Envelope, status: string, resolution: string | null) => {
    expect({ status: e.status, resolution: e.resolution ?? null }, JSON.stringify(e)).toEqual({ status, resolution });
    return e.idempotency_key;
  };

  const keys: Seeded["keys"] = {
    succeeded: [],
    found: [],
    absentResent: [],
    failed: [],
    resentThenRefused: "",
    stale: [],
    freshPending: "",
    needsHuman: "",
    humanConfirmedEffect: "",
    humanConfirmedNoEffect: "",
    unsafeSucceeded: "",
    slow: [],
    previous: [],
    beforePrevious: "",
  };

  for (let i = 0; i < 6; i++) keys.succeeded.push(expectEnvelope(await call(refund, [{}]), "SUCCEEDED", null));
  for (let i = 0; i < 3; i++)
    keys.found.push(expectEnvelope(await call(refund, [{ answer: 500 }]), "SUCCEEDED", "found"));
  for (let i = 0; i < 2; i++)
    keys.absentResent.push(
      expectEnvelope(await call(refund, [{ commit: false, answer: 503 }, {}]), "SUCCEEDED", "absent_resent"),
    );
  for (let i = 0; i < 2; i++)
    keys.failed.push(expectEnvelope(await call(refund, [{ commit: false, answer: 422 }]), "FAILED_NO_EFFECT", null));
  keys.resentThenRefused = expectEnvelope(
    await call(refund, [
      { commit: false, answer: 503 },
      { commit: false, answer: 422 },
    ]),
    "UNKNOWN",
    "needs_human",
  );

  keys.unsafeSucceeded = expectEnvelope(await call(unsafe, [{}]), "SUCCEEDED", null);
  const human: string[] = [];
  for (let i = 0; i < 3; i++)
    human.push(expectEnvelope(await call(unsafe, [{ answer: 500 }]), "UNKNOWN", "needs_human"));
  [keys.needsHuman, keys.humanConfirmedEffect, keys.humanConfirmedNoEffect] = human as [string, string, string];
  for (const [key, status, resolution] of [
    [keys.humanConfirmedEffect, "SUCCEEDED", "human_confirmed_effect"],
    [keys.humanConfirmedNoEffect, "FAILED_NO_EFFECT", "human_confirmed_no_effect"],
  ] as const) {
    const record = (await store.get(key))!;
    const now = Date.now();
    const done = await store.update(
      key,
      record.version,
      { status, resolution, needsHuman: false, finishedAtEpochMs: now },
      [{ key, type: "human_action", atEpochMs: now, data: { action: resolution, actor: "seed operator" } }],
      now,
    );
    expect(done?.resolution).toBe(resolution);
  }

  // Stale PENDING orphans and one PENDING still within its lease.
  for (const [i, ago] of [60_000, 30_000].entries()) {
    const r = await claimDirect(store, {
      tool: refund.name,
      runId: "run-stale",
      stepId: `stale-${i}`,
      orderId: `s-${i}`,
      createdAt: seedStart - ago - 5_000,
      deadline: seedStart - ago,
    });
    keys.stale.push(r.key);
  }
  keys.freshPending = (
    await claimDirect(store, {
      tool: refund.name,
      runId: "run-stale",
      stepId: "fresh",
      orderId: "f-1",
      createdAt: seedStart,
      deadline: seedStart + 3_600_000,
    })
  ).key;

  // slow_export in slice 0: durations 5..100 ms; every fifth UNKNOWN.
  for (let i = 0; i < 20; i++) {
    const createdAt = from + 1_000 + i;
    const durationMs = (i + 1) * 5;
    const unknown = i % 5 === 0;
    const done = createdAt + durationMs;
    const r = await claimDirect(store, {
      tool: "slow_export",
      runId: "run-slow",
      stepId: `slow-${String(i).padStart(2, "0")}`,
      orderId: `x-${i}`,
      createdAt,
      deadline: createdAt + 30_000,
      updatedAt: done,
      patch: unknown
        ? { status: "UNKNOWN", error: { code: "READ_TIMEOUT", message: "seed" } }
        : { status: "SUCCEEDED", result: { ok: true }, finishedAtEpochMs: done },
      events: (key): IntentEvent[] => [
        { key, type: "sent", atEpochMs: createdAt, data: { attempt: 1, timeoutMs: 100 } },
        {
          key,
          type: "outcome",
          atEpochMs: done,
          data: unknown
            ? { outcome: "UNKNOWN", code: "READ_TIMEOUT", durationMs }
            : { outcome: "SUCCEEDED", durationMs },
        },
      ],
    });
    keys.slow.push(r.key);
  }

  // The previous period [from − 20 min, from): 4 records, one of them UNKNOWN; one record before it.
  for (let i = 0; i < 4; i++) {
    const createdAt = from - 10 * 60_000 + i * 1_000;
    const unknown = i === 0;
    const r = await claimDirect(store, {
      tool: refund.name,
      runId: "run-prev",
      stepId: `prev-${i}`,
      orderId: `p-${i}`,
      createdAt,
      deadline: createdAt + 10_000,
      updatedAt: createdAt + 100,
      patch: unknown
        ? { status: "UNKNOWN", error: { code: "READ_TIMEOUT", message: "seed" } }
        : { status: "SUCCEEDED", result: null, finishedAtEpochMs: createdAt + 100 },
      events: (key) => [
        {
          key,
          type: "outcome",
          atEpochMs: createdAt + 100,
          data: { outcome: unknown ? "UNKNOWN" : "SUCCEEDED", durationMs: 100 },
        },
      ],
    });
    keys.previous.push(r.key);
  }
  keys.beforePrevious = (
    await claimDirect(store, {
      tool: refund.name,
      runId: "run-prev",
      stepId: "before",
      orderId: "b-1",
      createdAt: from - WINDOW_MS - 1,
      deadline: from - WINDOW_MS + 10_000,
      patch: { status: "SUCCEEDED", result: null, finishedAtEpochMs: from - WINDOW_MS },
    })
  ).key;

  if (Date.now() - seedStart > 55_000) throw new Error("seeding took too long for the slice layout");
  const allKeys = [
    ...keys.succeeded,
    ...keys.found,
    ...keys.absentResent,
    ...keys.failed,
    keys.resentThenRefused,
    ...keys.stale,
    keys.freshPending,
    keys.needsHuman,
    keys.humanConfirmedEffect,
    keys.humanConfirmedNoEffect,
    keys.unsafeSucceeded,
    ...keys.slow,
    ...keys.previous,
    keys.beforePrevious,
  ];
  return {
    seedStart,
    from,
    to,
    staleNow: seedStart + 100,
    toolTimeoutsMs: {
      issue_refund: refund.timeoutMs,
      unsafe_refund: unsafe.timeoutMs,
      slow_export: 100,
      never_called: 250,
    },
    keys,
    allKeys,
  };
}
