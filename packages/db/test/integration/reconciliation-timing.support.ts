/**
 * Shared pieces of the issue 9 reconciliation-timing tests (reconciliation-timing-*.test.ts): an
 * executor with scaled-down probes and budgets, skewed clocks, and sweeper/record helpers. Every
 * test runs on the real PostgreSQL (a database of its own per file) against a real loopback remote.
 */
import {
  type AnyTool,
  type Clock,
  createExecutor,
  type Executor,
  type ExecutorOptions,
  type IntentStore,
  type StoredIntentEvent,
  sweepStale,
  systemClock,
} from "@tristate/core";
import { expect } from "vitest";
import { PrismaOperatorStore } from "../../src/operator-store.ts";
import { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { createTestDatabase } from "../../src/test-database.ts";
import type { Cleanup } from "./helpers.ts";

/**
 * Probe rounds at +0, +50 and +150 ms: the "probe window" these tests vary lag, latency and skew
 * outside of (the production default is 0, +1, +3 s).
 */
export const PROBE = { attempts: 3, spacingMs: 50, timeoutMs: 250 } as const;
/** Approximate span of one reconciliation's probe rounds, ms (spacing 50 + 100). */
export const PROBE_WINDOW_MS = 150;

/** An executor with the scaled-down probes and a small reserve, so calls need only a short budget. */
export function timingExecutor(
  store: IntentStore,
  tools: AnyTool[],
  extra: Partial<Omit<ExecutorOptions, "store" | "tools">> = {},
): Executor {
  return createExecutor({ store, tools, probe: PROBE, reserveMs: 100, minCallBudgetMs: 100, ...extra });
}

/** A replica's clock that runs `offsetMs` ahead (positive) or behind (negative) the real one. */
export function skewedClock(offsetMs: number): Clock {
  return {
    nowEpochMs: () => Date.now() + offsetMs,
    monotonicMs: () => systemClock.monotonicMs(),
    sleep: (ms, signal) => systemClock.sleep(ms, signal),
  };
}

/** The refund arguments of one order. */
export function refund(order: string, amount = "49.90") {
  return { order_id: order, amount, currency: "EUR", reason: "arrived broken" };
}

/** One sweeper pass; the result it reported for `key` (undefined: the pass did not take it). */
export async function sweepKey(store: IntentStore, executor: Executor, key: string) {
  const report = await sweepStale({ store, executor });
  const mine = report.results.find((r) => r.key === key);
  if (mine?.error) throw new Error(`sweeper failed on ${key}: ${mine.error}`);
  return mine;
}

/** The record, which must exist. */
export async function mustGet(store: IntentStore, key: string) {
  const record = await store.get(key);
  expect(record, `record ${key}`).not.toBeNull();
  return record!;
}

/** The event types of a record's timeline, oldest first. */
export async function eventTypes(store: IntentStore, key: string): Promise<string[]> {
  return (await store.listEvents(key)).map((e) => e.type);
}

/** The probe events of a timeline as `{ probe, round, answer }` (plus `match` for attribution verdicts). */
export function probeEvents(events: StoredIntentEvent[]) {
  return events.filter((e) => e.type === "probe");
}

/**
 * A database of its own for one test, with its intent and operator stores (registered with
 * `cleanup`): a sweeper pass takes every due record, so another test's record must never be
 * reconciled with this test's tool against this test's remote.
 */
export async function freshStores(cleanup: Cleanup): Promise<{ store: PrismaIntentStore; ops: PrismaOperatorStore }> {
  const db = cleanup.add(await createTestDatabase(), (d) => d.drop());
  const store = cleanup.add(new PrismaIntentStore({ databaseUrl: db.url, poolSize: 4 }), (s) => s.close());
  return { store, ops: new PrismaOperatorStore(store.prisma) };
}
