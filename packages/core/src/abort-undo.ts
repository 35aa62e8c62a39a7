/**
 * Rule 13 after the abort: a step of an aborted run that settles later — in this process, on another
 * replica, by the sweeper, by a late answer, by an operator — is undone by the same rules as at abort
 * time (`undoStep`: reconcile first, compensate only a confirmed effect, irreversible → corrective or
 * a person), exactly once (its compensation's key is derived from the original's: a second undo
 * replays it), without anyone aborting again.
 *
 * Why nothing falls between an abort and a settle (READ COMMITTED, both sides on the store): the abort
 * commits its `run_aborts` row, then reads the run's records; a settle commits its outcome, then reads
 * the run's abort ({@link undoIfRunAborted}). Each read starts after its own write committed, so if the
 * abort's read missed the outcome (committed after that read began, hence after the abort row), the
 * settle's read began after the abort row committed and sees it — one of the two undoes the step.
 * A process that dies between its settle and its undo leaves the record to the sweeper's pass
 * ({@link undoAbortedSteps}).
 */
import { isCompensationStep } from "./compensation.ts";
import { Deadline } from "./deadline.ts";
import type { Envelope } from "./envelope.ts";
import type { IntentPatch, IntentRecord, IntentStore } from "./intent-store.ts";
import type { RunAbort } from "./run-abort.ts";
import type { Runtime } from "./runtime.ts";
import { type SagaApi, type StepReport, undoStep } from "./saga.ts";

/** Budget of an undo started after a settle or by the sweeper (its compensation's call, probes included), ms. */
export const UNDO_BUDGET_MS = 30_000;

/**
 * True when `record` (as just written to SUCCEEDED) is an effect an abort of its run would act on: an
 * original step (not a compensation) whose tool declares a compensation, is irreversible, or is no
 * longer in the catalog, and whose compensation has not been called yet.
 */
function mayNeedUndo(rt: Runtime, record: IntentRecord): boolean {
  if (record.status !== "SUCCEEDED" || isCompensationStep(record.stepId)) return false;
  if (record.compensation && "key" in record.compensation) return false;
  const tool = rt.tools.get(record.tool);
  return !tool || Boolean(tool.irreversible || tool.compensation);
}

/**
 * The one rule (13) for a record that has just become SUCCEEDED (an outcome write, a late answer, a
 * probe's find, a resend, an operator's `confirm_effect`): when its run was aborted, start its undo in
 * the background with its own budget ({@link UNDO_BUDGET_MS}, not the caller's turn), tracked in
 * `rt.pendingUndos` (awaited by `undosDone`). Reads the run's abort only for effects that have
 * something to undo. Never throws for the record's state; a failed undo is reported through
 * `rt.onBackgroundWriteError` and left to the sweeper's pass.
 * @returns the run's abort when the record's undo was started (or already runs), else null.
 * @throws what the store throws when it cannot read the run's abort.
 */
export async function undoIfRunAborted(rt: Runtime, api: SagaApi, record: IntentRecord): Promise<RunAbort | null> {
  if (!mayNeedUndo(rt, record)) return null;
  const abort = await rt.store.getRunAbort(record.runId);
  if (!abort) return null;
  startUndo(rt, api, record);
  return abort;
}

/** Runs `undoStep` for `record` in the background, once per key at a time in this process. */
function startUndo(rt: Runtime, api: SagaApi, record: IntentRecord): Promise<StepReport | null> {
  const running = rt.pendingUndos.get(record.key);
  if (running) return running as Promise<StepReport | null>;
  const done: Promise<StepReport | null> = undoStep(rt, api, record, Deadline.after(UNDO_BUDGET_MS, rt.clock))
    .catch((error: unknown) => {
      rt.onBackgroundWriteError?.(error, record.key);
      return null;
    })
    .finally(() => {
      if (rt.pendingUndos.get(record.key) === done) rt.pendingUndos.delete(record.key);
    });
  rt.pendingUndos.set(record.key, done);
  return done;
}

/**
 * `store` as the executor writes through it: every compare-and-set that makes a record SUCCEEDED or
 * FAILED_NO_EFFECT is followed by `settled` (the one place every outcome writer of this executor goes
 * through: sends, background writes, late answers, probes' finds, resends): the executor's runs
 * {@link undoIfRunAborted} for a SUCCEEDED, and tells a compensation's original how it ended
 * (`compensationSettled`). Every other member is the store's own (bound to it).
 */
export function abortAwareStore(store: IntentStore, settled: (record: IntentRecord) => Promise<unknown>): IntentStore {
  const update: IntentStore["update"] = async (key, expectedVersion, patch: IntentPatch, events, now, options) => {
    const updated = await store.update(key, expectedVersion, patch, events, now, options);
    if (updated && (patch.status === "SUCCEEDED" || patch.status === "FAILED_NO_EFFECT")) await settled(updated);
    return updated;
  };
  return new Proxy(store, {
    get(target, property) {
      if (property === "update") return update;
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * The sweeper's pass of rule 13: undoes the SUCCEEDED effects of aborted runs whose undo never ran
 * (the process that settled them died first, or its undo failed), settled before `graceMs` ago by the
 * store's clock (so an undo still running elsewhere is left to finish). One at a time; the
 * compensations' keys make a repeat replay.
 * @param options.limit - most records in one pass. @default 50
 * @param options.graceMs - how long after its settle a record is left to its own process, ms. @default {@link UNDO_BUDGET_MS}
 * @returns a report per record undone (or tried).
 * @throws what the store throws when it cannot list the records.
 */
export async function undoAbortedSteps(
  rt: Runtime,
  api: SagaApi,
  options: { limit?: number; graceMs?: number } = {},
): Promise<StepReport[]> {
  const now = rt.store.clockEpochMs ? await rt.store.clockEpochMs() : rt.clock.nowEpochMs();
  const due = await rt.store.listUndoDue({
    settledByEpochMs: now - (options.graceMs ?? UNDO_BUDGET_MS),
    limit: options.limit ?? 50,
    // Irreversible tools without a corrective register nothing to undo: their effects go to a person.
    uncorrectableTools: [...rt.tools.values()].filter((t) => t.irreversible && !t.corrective).map((t) => t.name),
  });
  const reports: StepReport[] = [];
  for (const record of due) {
    const report = await startUndo(rt, api, record);
    if (report) reports.push(report);
  }
  return reports;
}

/**
 * The envelope of a step that settled after its run was aborted, as the agent reads it: its effect is
 * being reversed; the run must not go on.
 */
export function abortedRunEnvelope(envelope: Envelope, abort: RunAbort): Envelope {
  const when = new Date(abort.abortedAtEpochMs).toISOString();
  return {
    ...envelope,
    action_taken: `${envelope.action_taken}; its run was aborted (${when}), so the effect is being reversed`,
    message: `This step took effect, but its run was aborted at ${when} by ${abort.actorName}${abort.reason ? ` (${abort.reason})` : ""}: the executor is reversing it. Do not continue the run or redo this step.`,
  };
}
