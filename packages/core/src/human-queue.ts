/**
 * Where reconciliation leaves a record it cannot settle: still UNKNOWN for the sweeper, or waiting
 * for a person in the human queue (DESIGN.md rule 5d).
 */
import type { Envelope } from "./envelope.ts";
import type { IntentError, IntentEvent, IntentPatch, IntentRecord } from "./intent-store.ts";
import { dueWhenLeaseEnds, recheckAt, storeClockNow } from "./lease.ts";
import { envelopeFor } from "./record-envelope.ts";
import { event } from "./record-events.ts";
import type { Runtime } from "./runtime.ts";
import type { ReasonCode } from "./statuses.ts";
import type { AnyTool } from "./tool.ts";

/**
 * Who is reconciling: a caller's repeat call, the call that just saw UNKNOWN, the sweeper, or an
 * abort of the record's run (which never resends: an aborted run must not gain an effect).
 */
export type ReconcileTrigger = "call" | "after_unknown" | "sweeper" | "abort";

/**
 * The next re-check time (epoch ms) of a record waiting in the human queue: a tool with a probe is
 * re-probed by the sweeper (an effect may still land: field case T06) after `humanRecheckMs` ×
 * 2^sweeps (at most 2^8); null for a tool without a probe: never re-checked, only a person settles it.
 */
export function humanRecheckAt(
  rt: Runtime,
  tool: AnyTool | undefined,
  sweeps: number,
  nowEpochMs: number,
): number | null {
  const hasProbe = Boolean(tool?.probe || tool?.probeByIdentity);
  return hasProbe ? nowEpochMs + rt.humanRecheckMs * 2 ** Math.min(sweeps, 8) : null;
}

/**
 * Puts a record in the human queue (UNKNOWN, `needsHuman`). While it waits, the sweeper takes it at
 * its next re-check time ({@link humanRecheckAt}, counted from the store's clock; none: only a person settles it).
 */
export async function toHuman(
  rt: Runtime,
  record: IntentRecord,
  code: ReasonCode,
  events: IntentEvent[],
  why: string,
  recheck: { tool: AnyTool; trigger: ReconcileTrigger },
): Promise<Envelope> {
  const now = rt.clock.nowEpochMs();
  const error: IntentError = { code, message: why };
  const sweeps = record.reconcileSweeps + (recheck.trigger === "sweeper" ? 1 : 0);
  const again = record.needsHuman && record.error?.code === code; // a re-check that learnt nothing new
  const updated = await rt.store.update(
    record.key,
    record.version,
    {
      status: "UNKNOWN",
      needsHuman: true,
      resolution: null,
      error,
      reconcileSweeps: sweeps,
      // The re-check time in the store's clock, which the sweeper takes it by (rule 9; issue 21 §6).
      ...recheckAt(record, humanRecheckAt(rt, recheck.tool, sweeps, await storeClockNow(rt))),
    },
    again ? events : [...events, event(rt, record.key, "needs_human", { code, reason: why })],
    now,
  );
  return afterWrite(rt, record.key, updated, events);
}

/**
 * Leaves a record UNKNOWN for a later pass. A sweeper pass without evidence counts towards
 * `maxReconcileSweeps` (then the human queue) unless `recheckAtEpochMs` is given: the record is
 * then due again at that time (a settle window or a `Retry-After` still running) and the pass is
 * not counted, since waiting for it is not a lack of evidence. `patch` is written with it.
 */
export async function stayUnknown(
  rt: Runtime,
  record: IntentRecord,
  events: IntentEvent[],
  failure: { code: ReasonCode; message: string },
  trigger: ReconcileTrigger,
  tool: AnyTool,
  recheckAtEpochMs?: number,
  patch: IntentPatch = {},
): Promise<Envelope> {
  const now = rt.clock.nowEpochMs();
  const waiting = recheckAtEpochMs !== undefined;
  const sweeps = record.reconcileSweeps + (trigger === "sweeper" && !waiting ? 1 : 0);
  if (trigger === "sweeper" && !waiting && sweeps >= rt.maxReconcileSweeps) {
    return toHuman(
      rt,
      { ...record, reconcileSweeps: sweeps },
      failure.code,
      events,
      `${failure.message}; no evidence after ${sweeps} sweeps`,
      { tool, trigger: "call" }, // this sweep is already counted in `sweeps`
    );
  }
  const replaceError = waiting || !record.error;
  const updated = await rt.store.update(
    record.key,
    record.version,
    {
      reconcileSweeps: sweeps,
      ...(replaceError ? { error: { ...record.error, code: failure.code, message: failure.message } } : {}),
      ...(waiting ? recheckAt(record, recheckAtEpochMs) : dueWhenLeaseEnds(record)),
      ...patch,
    },
    events,
    now,
  );
  return afterWrite(rt, record.key, updated, events);
}

/** After a compare-and-set: the written record's envelope, or the winner's state when we lost. */
export async function afterWrite(
  rt: Runtime,
  key: string,
  updated: IntentRecord | null,
  unsaved: IntentEvent[],
): Promise<Envelope> {
  if (updated) return envelopeFor(rt, updated, false);
  if (unsaved.length) await rt.store.appendEvents(unsaved);
  const current = await rt.store.get(key);
  if (!current) throw new Error(`intent record ${key} disappeared during reconciliation`);
  return envelopeFor(rt, current, true);
}
