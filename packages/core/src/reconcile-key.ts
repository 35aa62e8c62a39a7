/**
 * Reconciling one record by key, now: the sweeper's and the saga's entry point (DESIGN.md rule 5).
 */
import type { Deadline } from "./deadline.ts";
import type { Envelope } from "./envelope.ts";
import { inFlight } from "./existing-record.ts";
import type { IntentRecord, LeasedRecord } from "./intent-store.ts";
import { takeOverLease } from "./lease.ts";
import { reconcile } from "./reconcile.ts";
import { envelopeFor } from "./record-envelope.ts";
import type { Runtime } from "./runtime.ts";

/**
 * Reconciles the record with this key if it is UNKNOWN, or PENDING past its lease by the store's
 * clock (a call that never recorded its outcome: taken over first). A PENDING record whose lease
 * is live is reported in flight and left alone; a settled one is replayed.
 * @param known - the record as the caller just read or wrote it (the sweeper's `claimStale` row), used
 *   instead of a first read; a stale copy only makes its compare-and-set fail and the next round re-read.
 *   A {@link LeasedRecord} taken from PENDING has no probe round of its attempt on record: its
 *   timeline is not read for them.
 * @throws Error when the record or its tool does not exist.
 */
export async function reconcileKey(
  rt: Runtime,
  key: string,
  deadline: Deadline,
  trigger: "call" | "sweeper" | "abort",
  known?: IntentRecord | LeasedRecord,
): Promise<Envelope> {
  for (let round = 0; round < 5; round++) {
    let record: IntentRecord | undefined | null;
    let leasedFromPending = false;
    if (round === 0 && known?.key === key) {
      const { previousStatus, ...rest } = known as LeasedRecord;
      record = rest;
      leasedFromPending = previousStatus === "PENDING";
    } else {
      record = await rt.store.get(key);
    }
    if (!record) throw new Error(`reconcileKey: no intent record with key ${key}`);
    const tool = rt.tools.get(record.tool);
    if (!tool) throw new Error(`reconcileKey: record ${key} names tool "${record.tool}", which is not in the catalog`);
    if (record.status === "UNKNOWN") return reconcile(rt, tool, record, deadline, trigger, leasedFromPending);
    if (record.status !== "PENDING") return envelopeFor(rt, record, true);
    const taken = await takeOverLease(rt, tool, record);
    if (taken.kind === "live") return inFlight(rt, taken.record);
    if (taken.kind === "taken") return reconcile(rt, tool, taken.record, deadline, trigger, true);
  }
  throw new Error(`reconcileKey: record ${key} kept changing`);
}
