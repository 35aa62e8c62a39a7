/**
 * Leases, re-checks and the one clock that judges them (DESIGN.md rules 2, 8 and 9). A record's
 * `leaseUntilEpochMs` is its lease: while it has not passed, the call (or the sweeper) that owns the
 * record is at work; a PENDING record within its lease is in flight. `recheckAtEpochMs` says when the
 * sweeper next takes it (null: never, only a person settles it). Whether a time has passed is decided
 * by the store's clock (PostgreSQL's `now()`), never by a replica's, so a replica whose clock runs
 * ahead cannot take a live record (issue 9 §4).
 */
import type { Deadline } from "./deadline.ts";
import type { IntentPatch, IntentRecord } from "./intent-store.ts";
import { event } from "./record-events.ts";
import type { Runtime } from "./runtime.ts";
import type { AnyTool } from "./tool.ts";

/**
 * The store's clock, epoch ms: `IntentStore.clockEpochMs` where the store has one (PostgreSQL),
 * else the executor's clock (in-memory stores in unit tests).
 * @throws whatever the store throws when it is unreachable.
 */
export async function storeNow(rt: Runtime): Promise<number> {
  if (!rt.store.clockEpochMs) return rt.clock.nowEpochMs();
  const storeEpochMs = await rt.store.clockEpochMs();
  rt.storeClock = { storeEpochMs, monotonicMs: rt.clock.monotonicMs() };
  return storeEpochMs;
}

/** How long a reading of the store's clock is carried forward on a replica's monotonic clock: 10 s. */
export const STORE_CLOCK_REUSE_MS = 10_000;

/**
 * The store's clock now, epoch ms, for comparisons that decide what evidence means but need not
 * cost a round trip each (rule 9; issue 21 §6: key retention, confirmation expiry): the last
 * {@link storeNow} reading carried forward on this replica's monotonic clock when it is at most
 * {@link STORE_CLOCK_REUSE_MS} old — so the replica's wall clock, however skewed, never enters —
 * else a fresh reading. Off by at most the reading's round trip (it counts from the answer).
 * @throws whatever the store throws when a fresh reading is needed and the store is unreachable.
 */
export async function storeClockNow(rt: Runtime): Promise<number> {
  const last = rt.storeClock;
  if (last && rt.store.clockEpochMs) {
    const sinceMs = rt.clock.monotonicMs() - last.monotonicMs;
    if (sinceMs >= 0 && sinceMs <= STORE_CLOCK_REUSE_MS) return last.storeEpochMs + sinceMs;
  }
  return storeNow(rt);
}

/**
 * When absence could become proof for a send whose lease ends at `leaseEpochMs` (rule 5b): the
 * lease bounds the send (its per-call timeout never runs past it, and the lease is the
 * `Request-Deadline` forwarded to the remote), then the remote may take the tool's settle window
 * to apply the effect or show it to a probe. `timeoutMs` more covers a lease written by a replica
 * whose clock ran behind. Null for a tool without a settle window (absence never proves anything).
 */
export function settlesAtForLease(tool: Pick<AnyTool, "settleMs" | "timeoutMs">, leaseEpochMs: number): number | null {
  return tool.settleMs === undefined ? null : leaseEpochMs + tool.timeoutMs + tool.settleMs;
}

/**
 * The settle time of a send about to start with this deadline, in the store's clock: the store's now
 * + the time the deadline leaves (measured on this replica's monotonic clock, so its wall clock's
 * skew does not matter) + the tool's timeout and settle window. Null for a tool without a window.
 * Reads the store's clock only for a tool with a window.
 */
export async function settlesAtForSend(rt: Runtime, tool: AnyTool, deadline: Deadline): Promise<number | null> {
  if (tool.settleMs === undefined) return null;
  return settlesAtForLease(tool, (await storeNow(rt)) + Math.max(0, deadline.remainingMs()));
}

/**
 * The patch of a call that takes the record until `epochMs` (its deadline: a new attempt, a resend):
 * leased until then, and due for the sweeper then, should the call's outcome never be written.
 */
export function leasedUntil(epochMs: number): Pick<IntentPatch, "leaseUntilEpochMs" | "recheckAtEpochMs"> {
  return { leaseUntilEpochMs: epochMs, recheckAtEpochMs: epochMs };
}

/**
 * The patch that ends a pass over `record` and schedules the sweeper's next look: due at `atEpochMs`
 * (null: never, only a person settles it). The pass's lease ends by then at the latest, so the record
 * is due at that time even when it falls within the lease.
 */
export function recheckAt(
  record: Pick<IntentRecord, "leaseUntilEpochMs">,
  atEpochMs: number | null,
): Pick<IntentPatch, "leaseUntilEpochMs" | "recheckAtEpochMs"> {
  if (atEpochMs === null) return { recheckAtEpochMs: null };
  return { recheckAtEpochMs: atEpochMs, leaseUntilEpochMs: Math.min(record.leaseUntilEpochMs, atEpochMs) };
}

/**
 * The patch that ends a pass over `record` without a time of its own: due again when the lease it
 * holds ends (as a sweeper's pass that learnt nothing); a record without a re-check keeps none.
 */
export function dueWhenLeaseEnds(
  record: Pick<IntentRecord, "leaseUntilEpochMs" | "recheckAtEpochMs">,
): Pick<IntentPatch, "recheckAtEpochMs"> {
  const recheck = record.recheckAtEpochMs;
  return { recheckAtEpochMs: recheck === null ? null : Math.max(recheck, record.leaseUntilEpochMs) };
}

/** What {@link takeOverLease} found. */
export type TakeOver =
  /** The lease had passed: the record is UNKNOWN now (`LEASE_EXPIRED`) and this caller may reconcile it. */
  | { kind: "taken"; record: IntentRecord }
  /** The lease has not passed by the store's clock: the owner's call is still in flight (rule 2). */
  | { kind: "live"; record: IntentRecord }
  /** The record changed meanwhile: read it again. */
  | { kind: "changed" };

/**
 * Takes over a PENDING record whose lease has passed by the store's clock: one compare-and-set to
 * UNKNOWN (`LEASE_EXPIRED`) that applies only while `lease < now()` in the store. The settle
 * window then starts no earlier than now (the owner may have written its request until its lease,
 * by its own clock). Nothing else is changed when the lease is live.
 * @throws whatever the store throws.
 */
export async function takeOverLease(rt: Runtime, tool: AnyTool | undefined, record: IntentRecord): Promise<TakeOver> {
  const now = rt.clock.nowEpochMs();
  const settlesAt =
    tool?.settleMs === undefined
      ? record.settlesAtEpochMs
      : await settleAfterTakeOver(rt, tool, record.settlesAtEpochMs);
  const taken = await rt.store.update(
    record.key,
    record.version,
    {
      status: "UNKNOWN",
      error: {
        code: "LEASE_EXPIRED",
        message: "the call's deadline passed with no outcome recorded (crash or lost outcome)",
      },
      settlesAtEpochMs: settlesAt,
    },
    [event(rt, record.key, "lease_expired", { previousDeadlineEpochMs: record.leaseUntilEpochMs })],
    now,
    { onlyIfLeaseExpired: true },
  );
  if (taken) return { kind: "taken", record: taken };
  const current = await rt.store.get(record.key);
  if (current && current.version === record.version && current.status === "PENDING") {
    return { kind: "live", record: current };
  }
  return { kind: "changed" };
}

async function settleAfterTakeOver(rt: Runtime, tool: AnyTool, current: number | null): Promise<number> {
  const fromNow = settlesAtForLease(tool, await storeNow(rt)) as number;
  return current === null ? fromNow : Math.max(current, fromNow);
}
