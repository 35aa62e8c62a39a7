/**
 * Outcome writes left in the background (`backgroundOutcomes`): the caller is answered from the
 * record as the write will leave it, and the write must still reach the log.
 */
import type { IntentPatch, IntentRecord } from "./intent-store.ts";
import type { Runtime } from "./runtime.ts";

/** Retries of a background outcome write that failed (a dropped connection, a restarting database), ms apart. */
const BACKGROUND_RETRY_DELAYS_MS = [50, 100, 200, 400, 800];

/**
 * A background outcome write (`writeOnce`: the compare-and-set with its late-answer handling): what
 * the caller was already told must reach the log. A write that throws is tried again
 * ({@link BACKGROUND_RETRY_DELAYS_MS}) — after reading whether the failed statement committed after
 * all (its answer lost with its connection) — also once the record's lease has passed: a sweeper that
 * took the record over meanwhile makes the compare-and-set fail, and the late-answer path then
 * records the effect this process holds proof of (rule 10). When every try fails the record stays
 * PENDING (or the sweeper's UNKNOWN): the sweeper settles it by a probe or a same-key resend the
 * remote deduplicates (only such tools write in the background: `lostOutcomeIsCheap`), and
 * `rt.onBackgroundWriteError` reports it. Never rejects.
 */
export async function writeInBackground(
  rt: Runtime,
  record: IntentRecord,
  status: IntentRecord["status"] | undefined,
  writeOnce: () => Promise<unknown>,
): Promise<void> {
  let lastError: unknown;
  for (let attempt = 0; attempt <= BACKGROUND_RETRY_DELAYS_MS.length; attempt++) {
    if (attempt > 0) {
      await new Promise((resolve) => setTimeout(resolve, BACKGROUND_RETRY_DELAYS_MS[attempt - 1]));
      const current = await rt.store.get(record.key).catch(() => undefined);
      if (current === undefined) {
        lastError ??= new Error("the intent log is unreachable");
        continue;
      }
      if (current && current.version !== record.version && current.status === status) return; // it landed
    }
    try {
      await writeOnce();
      return;
    } catch (error) {
      lastError = error;
    }
  }
  rt.onBackgroundWriteError?.(lastError, record.key);
}

/** The record as a successful compare-and-set of `patch` leaves it (`undefined` leaves a field, but clears `result`). */
export function applied(record: IntentRecord, patch: IntentPatch, now: number): IntentRecord {
  const next: Record<string, unknown> = { ...record, version: record.version + 1, updatedAtEpochMs: now };
  for (const [field, value] of Object.entries(patch))
    if (value !== undefined || field === "result") next[field] = value;
  return next as unknown as IntentRecord;
}
