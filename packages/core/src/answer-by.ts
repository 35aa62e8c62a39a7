/**
 * Every call answers by its deadline minus the reserve, whatever the executor's own waits do (issue
 * 21 §1; source design: "one budget from the turn down to the socket", the reserve kept "so the agent
 * can still report"). A claim held up by a lock or a stalled database, a group-commit batch, an outcome
 * write: when the time to answer comes first, the call is answered from what it has done so far
 * ({@link CallProgress}), and its own work goes on in the background — it sends nothing after that,
 * since every send re-checks the deadline right before it starts (`invokeOnce` in send.ts).
 * @module
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Deadline } from "./deadline.ts";
import { type Envelope, refusalEnvelope } from "./envelope.ts";
import type { IntentRecord } from "./intent-store.ts";
import { envelopeFor } from "./record-envelope.ts";
import type { Runtime } from "./runtime.ts";

/**
 * A call that would have less than this left before its answer time still gets this long (ms) to
 * read its record (a repeat of a settled step is replayed, not answered "unknown"): its answer may then
 * come up to this late when its own database is slow.
 */
export const LEAST_ANSWER_WINDOW_MS = 250;

/** What one call has done so far: what it answers if its time to answer comes first. */
export interface CallProgress {
  /** The call's idempotency key, once derived ("" before). */
  key: string;
  /** The effect phrase (`describe`), once derived (the tool's name before). */
  phrase: string;
  /** The tool has no effect (`read_only`): nothing this call does can leave one. */
  readOnly: boolean;
  /** A send has started (its bytes may have reached the remote). */
  sent: boolean;
  /**
   * The record as its last outcome write leaves (or, for a SUCCEEDED still being written, will leave)
   * it: what the answer says once known.
   */
  record: IntentRecord | null;
}

const storage = new AsyncLocalStorage<CallProgress>();

/** Marks, in the current call (if any), that a send is about to start. */
export function markSending(): void {
  const progress = storage.getStore();
  if (progress) progress.sent = true;
}

/**
 * Tells the current call (if any) what its record is, or (SUCCEEDED, written but not yet confirmed)
 * will be: the answer if its time runs out now. A FAILED_NO_EFFECT that is not yet written is never
 * told early — were the write lost, the sweeper could still resend — so pass those only once written.
 */
export function markRecord(record: IntentRecord): void {
  const progress = storage.getStore();
  if (progress) progress.record = record;
}

/**
 * The answer of a call whose time ran out before its own work ended. Unless its outcome is known
 * (SUCCEEDED with proof in hand, or a record already written), it is UNKNOWN `INTENT_LOG_TIMEOUT`:
 * whether an earlier call of the step did it cannot be read in time, and a claim whose commit is not
 * confirmed may still commit (the record is then reconciled). Nothing is sent after this answer.
 */
export function lateEnvelope(rt: Runtime, progress: CallProgress): Envelope {
  if (progress.record) return envelopeFor(rt, progress.record, false);
  if (progress.readOnly) {
    return refusalEnvelope({
      key: progress.key,
      effectPhrase: progress.phrase,
      error: {
        code: "DEADLINE_EXCEEDED",
        message: "the lookup did not finish within this turn's time",
        field: "deadline",
      },
      retrySafe: true,
      message: "The lookup did not finish in this turn's time. It has no effect: you may run it again in a new turn.",
    });
  }
  const sent = progress.sent;
  return {
    status: "UNKNOWN",
    retry_safe: false,
    effect: `${progress.phrase}: may or may not have happened`,
    action_taken: sent
      ? "the request was sent; its outcome could not be recorded within this turn's time and will be reconciled"
      : "nothing was sent by this call: the executor could not read or record this step within this turn's time",
    message: sent
      ? "Do not do this again in another step. Tell the user it is being confirmed; calling again for this step (same run and step) reports the outcome."
      : "Do not do this in another step. Call again for this same step (same run and step) in a new turn: it reports the outcome if this action was recorded, or carries it out once if it was not.",
    idempotency_key: progress.key,
    attempt: 0,
    replayed: false,
    error: {
      code: "INTENT_LOG_TIMEOUT",
      message: sent
        ? "the executor's intent log did not confirm the outcome write before this turn's answer time"
        : "the executor's intent log did not answer before this turn's answer time; nothing was sent by this call",
    },
  };
}

/**
 * Runs one call's work (`work`, in its own progress context) and answers by `deadline` minus
 * `rt.reserveMs` (at least {@link LEAST_ANSWER_WINDOW_MS} from now): the work's envelope, or — when
 * the time comes first — {@link lateEnvelope}. Work left running is kept in `rt.lateCalls` until it
 * ends (its errors go to `rt.onBackgroundWriteError`). The answer time is measured on `rt.clock` (a
 * fake clock that does not move never answers late).
 */
export async function answerByDeadline(
  rt: Runtime,
  deadline: Deadline,
  progress: CallProgress,
  work: () => Promise<Envelope>,
): Promise<Envelope> {
  const running = storage.run(progress, work);
  const untilAnswer = () => deadline.remainingMs() - rt.reserveMs;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<null>((resolve) => {
    const arm = (ms: number) => {
      timer = setTimeout(() => {
        const left = untilAnswer();
        // A fake clock moves only when told: wait for it, on real time, without answering early.
        if (left > 0) arm(left);
        else resolve(null);
      }, ms);
      timer.unref?.();
    };
    arm(Math.max(untilAnswer(), LEAST_ANSWER_WINDOW_MS));
  });
  try {
    const first = await Promise.race([running, late]);
    if (first !== null) return first;
  } finally {
    clearTimeout(timer);
  }
  const id = Symbol(progress.key);
  const left = running.then(
    () => {},
    (error: unknown) => rt.onBackgroundWriteError?.(error, progress.key),
  );
  rt.lateCalls.set(id, left);
  void left.finally(() => rt.lateCalls.delete(id));
  return lateEnvelope(rt, progress);
}

/**
 * Waits for `work` no longer than `deadline` minus `rt.reserveMs` (at least
 * {@link LEAST_ANSWER_WINDOW_MS}), on real time; `work` goes on after that (its result is dropped).
 * For entries that wait on this executor's own background work before acting (issue 21 §1).
 */
export async function untilAnswerTime(rt: Runtime, deadline: Deadline, work: Promise<unknown>): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, Math.max(deadline.remainingMs() - rt.reserveMs, LEAST_ANSWER_WINDOW_MS));
    timer.unref?.();
  });
  try {
    await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
