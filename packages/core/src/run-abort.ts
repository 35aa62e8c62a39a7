/**
 * An abort is a durable state of the run (DESIGN.md rule 13): the record of who aborted a run, when
 * and why, written once before anything of the run is compensated, and the refusal of a new step of
 * an aborted run.
 */
import { brandError, errorKindOf } from "./brand.ts";

/** How a run was aborted: an agent (`runs.abort`), an operator (`runs.operatorAbort`), or code embedding the executor. */
export const RUN_ABORT_VIAS = ["agent", "operator", "embedded"] as const;
/** See {@link RUN_ABORT_VIAS}. */
export type RunAbortVia = (typeof RUN_ABORT_VIAS)[number];

/** Who aborts a run and why (what {@link IntentStore.markRunAborted} records). */
export interface RunAbortInput {
  /** The API key's id ("" when the executor is called directly). */
  actorKeyId: string;
  /** The key's (or the embedding code's) name. */
  actorName: string;
  via: RunAbortVia;
  /** Why, as the caller gave it ("" when not given). */
  reason: string;
}

/** A run's abort as recorded: the first abort's who and why, and when by the store's clock. */
export interface RunAbort extends RunAbortInput {
  runId: string;
  /** Epoch ms, by the store's clock (rule 9), when the first abort was recorded. */
  abortedAtEpochMs: number;
}

/** The defaults of an abort by code embedding the executor (no key, no reason). */
export const EMBEDDED_ABORT: RunAbortInput = { actorKeyId: "", actorName: "executor", via: "embedded", reason: "" };

/**
 * Thrown by `IntentStore.claim` when no record exists for the key or the (run, step, tool) and the
 * run has been aborted: nothing was inserted, nothing may be sent (rule 13). The executor answers it
 * FAILED_NO_EFFECT `RUN_ABORTED_BEFORE_SEND`.
 */
export class RunAbortedError extends Error {
  override readonly name = "RunAbortedError";
  /** The run's abort. */
  readonly abort: RunAbort;
  constructor(abort: RunAbort) {
    super(`run ${abort.runId} was aborted at ${new Date(abort.abortedAtEpochMs).toISOString()}: no new step is sent`);
    this.abort = abort;
    brandError(this, "run_aborted");
  }
}

/** True for a {@link RunAbortedError} (of any copy of this package). */
export function isRunAbortedError(value: unknown): value is RunAbortedError {
  return errorKindOf(value) === "run_aborted";
}
