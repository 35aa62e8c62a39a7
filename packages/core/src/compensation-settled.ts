/**
 * A compensation (or corrective) that settles after the abort that ran it — a sweeper's
 * reconciliation, a late answer, a person's decision — tells its original (rule 13). Found by the
 * chaos campaign (issue 21): an abort left a cancellation UNKNOWN, a person later declared it "no
 * effect", and the aborted run's booking stood with nobody told: the original still said its reversal
 * was being reconciled, and the sweeper's pass does not undo a step twice.
 * @module
 */
import { COMPENSATE_STEP_PREFIX, CORRECT_STEP_PREFIX, type RanCompensation } from "./compensation.ts";
import type { IntentPatch, IntentRecord } from "./intent-store.ts";
import { event } from "./record-events.ts";
import type { Runtime } from "./runtime.ts";

/** The key of the record a compensation step undoes (`compensate:<key>`, `correct:<key>`), or null. */
function originalKeyOf(stepId: string): string | null {
  for (const prefix of [COMPENSATE_STEP_PREFIX, CORRECT_STEP_PREFIX])
    if (stepId.startsWith(prefix)) return stepId.slice(prefix.length);
  return null;
}

/**
 * Notes a settled compensation record's outcome on its original, when the original's note names this
 * compensation (by key) with another status: SUCCEEDED → the reversal is noted, and a queue entry for
 * a failed one (`COMPENSATION_FAILED`) is settled; FAILED_NO_EFFECT → the effect stands: the original
 * goes to the human queue (`COMPENSATION_FAILED`), where a person runs `compensate` again or decides.
 * A note not yet written (the abort that runs the compensation writes it when the call answers) is
 * left to that abort. Compare-and-set, tried up to 3 times.
 * @param record - a record just settled (any record: others are ignored).
 * @throws what the store throws.
 */
export async function compensationSettled(rt: Runtime, record: IntentRecord): Promise<void> {
  if (record.status !== "SUCCEEDED" && record.status !== "FAILED_NO_EFFECT") return;
  const originalKey = originalKeyOf(record.stepId);
  if (originalKey === null) return;
  for (let i = 0; i < 3; i++) {
    const original = await rt.store.get(originalKey);
    const note = original?.compensation;
    if (!original || !note || !("key" in note) || note.key !== record.key || note.status === record.status) return;
    const now = rt.clock.nowEpochMs();
    const failed = record.status === "FAILED_NO_EFFECT";
    const spec = { ...note, status: record.status, needsHuman: failed, atEpochMs: now };
    const why = `its ${note.kind} (${note.tool}) ended without effect after the abort: the effect stands; run compensate again, or decide`;
    const queuedForFailure = original.needsHuman && original.error?.code === "COMPENSATION_FAILED";
    const patch: IntentPatch = failed
      ? { compensation: spec, needsHuman: true, error: { code: "COMPENSATION_FAILED", message: why } }
      : { compensation: spec, ...(queuedForFailure ? { needsHuman: false, error: null } : {}) };
    const events = [
      event(rt, originalKey, "compensation", {
        tool: note.tool,
        key: note.key,
        status: record.status,
        kind: note.kind,
      }),
      ...(failed && !original.needsHuman
        ? [event(rt, originalKey, "needs_human", { code: "COMPENSATION_FAILED", reason: why })]
        : []),
    ];
    if (await rt.store.update(originalKey, original.version, patch, events, now)) return;
  }
}

/**
 * Called by the abort once its note on the original has committed. An UNKNOWN answered late (issue 21
 * §1: the compensation's claim outlived its answer time) may belong to a compensation that has settled
 * since — its settle hook found no note yet and left it to the abort. Reading the compensation after
 * the note committed closes that gap: one of the two tells the original (READ COMMITTED, as in
 * abort-undo.ts), never a note "being reconciled" that nobody will update.
 * @param note - the note just written on the original.
 * @throws what the store throws.
 */
export async function compensationNoted(rt: Runtime, note: RanCompensation): Promise<void> {
  if (note.status !== "UNKNOWN" || !note.key) return;
  const compensation = await rt.store.get(note.key);
  if (compensation) await compensationSettled(rt, compensation);
}
