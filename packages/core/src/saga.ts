import { type CallInput, storedArgsForHooks } from "./call-input.ts";
import {
  COMPENSATE_STEP_PREFIX,
  CORRECT_STEP_PREFIX,
  isCompensationStep,
  type RanCompensation,
} from "./compensation.ts";
import { compensationNoted } from "./compensation-settled.ts";
import { Deadline } from "./deadline.ts";
import type { Envelope } from "./envelope.ts";
import { humanRecheckAt } from "./human-queue.ts";
import type { IntentRecord } from "./intent-store.ts";
import { toJson } from "./json.ts";
import { recheckAt } from "./lease.ts";
import { effectPhrase } from "./record-envelope.ts";
import { event } from "./record-events.ts";
import { redactArgs } from "./redact.ts";
import { EMBEDDED_ABORT, type RunAbort, type RunAbortInput } from "./run-abort.ts";
import type { Runtime } from "./runtime.ts";
import type { AnyTool, CompensationSpec } from "./tool.ts";
import { inSpan } from "./tracing.ts";

/** What an abort did with one step of the run. */
export type StepOutcome =
  /** The confirmed effect was reversed (now, or by an earlier abort: its compensation replayed). */
  | "compensated"
  /** An irreversible effect was followed by its corrective action. */
  | "corrected"
  /** The step had no effect (FAILED_NO_EFFECT): nothing to undo. */
  | "no_effect"
  /** Still UNKNOWN after reconciliation: never compensated blindly (rule 6); in the human queue. */
  | "not_confirmed"
  /** A call for this step (or its compensation) is still in flight: it is undone when it settles (rule 13). */
  | "in_flight"
  /** Confirmed, but the tool declares no compensation: left as is. */
  | "no_compensation"
  /** Irreversible without a corrective tool: in the human queue. */
  | "needs_correction"
  /** The compensation (or correction) ended FAILED_NO_EFFECT or could not be built: in the human queue. */
  | "compensation_failed"
  /** The compensation (or correction) ended UNKNOWN: reconciled like any call; in the human queue if undecided. */
  | "compensation_unknown";

/** One step of an abort report. */
export interface StepReport {
  stepId: string;
  tool: string;
  /** The original call's idempotency key. */
  key: string;
  /** The original record's status after reconciliation. */
  status: IntentRecord["status"];
  outcome: StepOutcome;
  /** The compensating (or corrective) call's envelope, when one was called. */
  compensation?: Envelope;
  /** One sentence for the model. */
  message: string;
}

/** What `abortRun` did: an entry per step (latest first, the order compensations run in) and a summary. */
export interface AbortReport {
  runId: string;
  /** The run's abort as recorded (the first abort's who, when and why: a repeat keeps them). */
  abort: RunAbort;
  steps: StepReport[];
  /**
   * True when nothing is left in flight and nothing waits for a person: every confirmed effect was
   * compensated or corrected (or stays by declaration), every other step had no effect.
   */
  complete: boolean;
  /** Steps whose effect was reversed or corrected ("undone"). */
  undone: number;
  /** Steps (or their compensations) still in flight: each is undone when it settles, without another abort. */
  inFlight: number;
  /** Steps a person must look at (in the human queue): "waiting for a person". */
  needsHuman: number;
  /** A paragraph the model can read and relay. */
  summary: string;
}

/** The executor operations the saga needs. */
export interface SagaApi {
  call(input: CallInput): Promise<Envelope>;
  reconcileKey(key: string, deadline: Deadline): Promise<Envelope>;
}

/**
 * Aborts a run (the saga pattern; source design "Compensation for a single call" and DESIGN.md
 * rule 6): reconciles every UNKNOWN or stale PENDING effect of the run first; then, latest step
 * first, compensates confirmed effects through their declared compensation — itself a tool call with
 * its own intent record, a key derived from the original key, the caller's deadline, probes and the
 * three outcomes; irreversible effects get their corrective action or go to the human queue.
 * Effects that are not confirmed are never compensated. Calling it twice does nothing twice: the
 * compensations replay.
 *
 * The abort is recorded with the run first (rule 13: who, when by the store's clock, why; the first
 * abort's stay), before anything is read or compensated: from then on a new step of the run is
 * refused, and a step that settles later is undone then (`undoIfRunAborted`, the sweeper's pass).
 * @param by - who aborts and why. @default {@link EMBEDDED_ABORT}
 * @throws TypeError for a missing run id or a deadline that is not a Deadline.
 */
export async function abortRun(
  rt: Runtime,
  api: SagaApi,
  runId: string,
  deadline: Deadline,
  by: RunAbortInput = EMBEDDED_ABORT,
): Promise<AbortReport> {
  if (typeof runId !== "string" || runId === "") throw new TypeError("abortRun: runId must be a non-empty string");
  if (!(deadline instanceof Deadline)) throw new TypeError("abortRun: deadline must be a Deadline");
  return inSpan(rt, `abort_run ${runId}`, { "tristate.run_id": runId }, async () => {
    // 0. Durably first: what settles after this commit learns of it; what settled before, we read below.
    const { abort } = await rt.store.markRunAborted(runId, by);
    // Steps the archive moved are the run's too (rule 15): back to the live log, to be seen and undone.
    await rt.store.restoreArchivedRun?.(runId);
    const originals = () => rt.store.listByRun(runId).then((rs) => rs.filter((r) => !isCompensationStep(r.stepId)));
    // 1. Reconcile first: never compensate an UNKNOWN.
    // A PENDING record is reconciled only once its lease has passed by the store's clock (rule 9).
    for (const r of await originals()) {
      if (r.status === "UNKNOWN" || r.status === "PENDING") await api.reconcileKey(r.key, deadline);
    }
    // 2. Compensate confirmed effects, latest step first.
    const steps: StepReport[] = [];
    for (const r of (await originals()).reverse()) {
      steps.push(await undoStep(rt, api, r, deadline));
    }
    const needsHuman = steps.filter((s) =>
      ["not_confirmed", "needs_correction", "compensation_failed", "compensation_unknown"].includes(s.outcome),
    ).length;
    const inFlight = steps.filter((s) => s.outcome === "in_flight").length;
    const undone = steps.filter((s) => s.outcome === "compensated" || s.outcome === "corrected").length;
    const complete = needsHuman === 0 && inFlight === 0;
    return { runId, abort, steps, complete, undone, inFlight, needsHuman, summary: summarise(runId, steps) };
  });
}

/**
 * Compensates one confirmed effect (an abort's step, or an operator's `compensate`).
 * @returns the step report; never throws for a record's state.
 */
export async function undoStep(
  rt: Runtime,
  api: SagaApi,
  record: IntentRecord,
  deadline: Deadline,
): Promise<StepReport> {
  const base = { stepId: record.stepId, tool: record.tool, key: record.key, status: record.status };
  const tool = rt.tools.get(record.tool);
  const phrase = effectPhrase(tool, record.tool, storedArgsForHooks(tool, record.args), record.identity);
  switch (record.status) {
    case "FAILED_NO_EFFECT":
      return { ...base, outcome: "no_effect", message: `${phrase} did not happen; nothing to undo.` };
    case "PENDING":
      return {
        ...base,
        outcome: "in_flight",
        message: `${phrase} is still in flight; ${inFlightFate(tool)} (no need to abort again).`,
      };
    case "UNKNOWN":
      // Never compensated blindly (rule 6), and never left to the sweeper alone: it waits for a
      // person, is not resent, and if a probe finds it later it stays queued to be compensated.
      await queueAborted(rt, record, `${phrase} may or may not have happened, and its run was aborted`);
      return {
        ...base,
        outcome: "not_confirmed",
        message: `${phrase} may or may not have happened; it is not compensated blindly and waits for an operator.`,
      };
    case "SUCCEEDED":
      break;
  }
  if (!tool) {
    await markForHuman(
      rt,
      record,
      "COMPENSATION_FAILED",
      `tool ${record.tool} is no longer in the catalog, so its effect cannot be undone automatically`,
    );
    return {
      ...base,
      outcome: "needs_correction",
      message: `${phrase}: tool ${record.tool} is no longer in the catalog; an operator must undo it.`,
    };
  }
  const corrective = Boolean(tool.irreversible);
  const spec: CompensationSpec<unknown, unknown> | undefined = corrective ? tool.corrective : tool.compensation;
  if (!spec) {
    if (!corrective) {
      return {
        ...base,
        outcome: "no_compensation",
        message: `${phrase} happened; ${tool.name} declares no compensation, so it stays.`,
      };
    }
    await markForHuman(
      rt,
      record,
      "IRREVERSIBLE_NEEDS_CORRECTION",
      `${phrase} cannot be undone and has no corrective action`,
    );
    return {
      ...base,
      outcome: "needs_correction",
      message: `${phrase} cannot be undone; an operator has been asked to correct it.`,
    };
  }
  return runCompensation(rt, api, record, deadline, { base, phrase, tool, spec, corrective });
}

/** What {@link runCompensation} reports on: the step, its effect in words, and the compensation to run. */
interface Undo {
  base: Pick<StepReport, "stepId" | "tool" | "key" | "status">;
  phrase: string;
  tool: AnyTool;
  spec: CompensationSpec<unknown, unknown>;
  /** The tool is irreversible and `spec` is its corrective, not a compensation. */
  corrective: boolean;
}

/**
 * Calls the compensation (or corrective) of a confirmed effect under its reserved step id and reports
 * its outcome; a compensation that cannot be built or fails puts the original in the human queue.
 */
async function runCompensation(
  rt: Runtime,
  api: SagaApi,
  record: IntentRecord,
  deadline: Deadline,
  { base, phrase, tool, spec, corrective }: Undo,
): Promise<StepReport> {
  let args: Record<string, unknown>;
  try {
    args = spec.args(storedArgsForHooks(tool, record.args), record.result);
  } catch (error) {
    await markForHuman(
      rt,
      record,
      "COMPENSATION_FAILED",
      redactArgs(tool, record.args, `the compensation's arguments could not be built: ${String(error)}`),
    );
    return {
      ...base,
      outcome: "compensation_failed",
      message: `${phrase}: the compensation could not be prepared; an operator has been asked to undo it.`,
    };
  }
  const envelope = await api.call({
    runId: record.runId,
    stepId: `${corrective ? CORRECT_STEP_PREFIX : COMPENSATE_STEP_PREFIX}${record.key}`,
    tool: spec.tool,
    args,
    deadline,
  });
  if (envelope.status === "UNKNOWN" && envelope.error?.code === "IN_FLIGHT") {
    // Another abort (or an operator) is running this compensation right now (issue 9 §7): report
    // it in flight, and leave the note on the original to the call that owns it.
    return {
      ...base,
      outcome: "in_flight",
      compensation: envelope,
      message: `${phrase}: its reversal (${spec.tool}) is in flight in another call; the run page shows its outcome.`,
    };
  }
  await noteCompensation(rt, record.key, { tool: spec.tool, args, envelope, corrective });
  switch (envelope.status) {
    case "SUCCEEDED":
      return {
        ...base,
        outcome: corrective ? "corrected" : "compensated",
        compensation: envelope,
        message: `${phrase} was ${corrective ? "followed by its correction" : "reversed"} (${spec.tool}${envelope.replayed ? ", already done earlier" : ""}).`,
      };
    case "FAILED_NO_EFFECT":
      // The original waits in the human queue (an operator can run `compensate` on it, or abort
      // again); the compensation's own FAILED_NO_EFFECT record is not something to resolve.
      await markForHuman(
        rt,
        record,
        "COMPENSATION_FAILED",
        `the compensation (${spec.tool}) failed: ${envelope.error?.message ?? "failed"}`,
      );
      return {
        ...base,
        outcome: "compensation_failed",
        compensation: envelope,
        message: `${phrase} could not be reversed: ${spec.tool} failed (${envelope.error?.code ?? "failed"}); an operator has been asked to handle it.`,
      };
    case "UNKNOWN":
      return {
        ...base,
        outcome: "compensation_unknown",
        compensation: envelope,
        message: `${phrase}: its reversal (${spec.tool}) may or may not have happened; it is being reconciled, and an operator will decide if it cannot be.`,
      };
  }
}

/** Writes the compensation's key and outcome onto the original record (for the dashboard and counts). */
async function noteCompensation(
  rt: Runtime,
  key: string,
  c: { tool: string; args: Record<string, unknown>; envelope: Envelope; corrective: boolean },
): Promise<void> {
  const spec: RanCompensation = {
    tool: c.tool,
    args: toJson(c.args) ?? null,
    kind: c.corrective ? "corrective" : "compensation",
    key: c.envelope.idempotency_key,
    status: c.envelope.status,
    needsHuman: c.envelope.status !== "SUCCEEDED",
    atEpochMs: rt.clock.nowEpochMs(),
  };
  for (let i = 0; i < 5; i++) {
    const current = await rt.store.get(key);
    if (!current) return;
    const now = rt.clock.nowEpochMs();
    const ev = event(rt, key, "compensation", { tool: c.tool, key: spec.key, status: spec.status, kind: spec.kind });
    // A compensation that succeeds now settles an earlier failed one that sent this record to the queue.
    // So does one of an effect found after its run was aborted (queued `RUN_ABORTED` to be compensated).
    const queuedFor = current.error?.code;
    const settled =
      c.envelope.status === "SUCCEEDED" &&
      current.needsHuman &&
      (queuedFor === "COMPENSATION_FAILED" || (queuedFor === "RUN_ABORTED" && current.status === "SUCCEEDED"));
    const patch = settled ? { compensation: spec, needsHuman: false, error: null } : { compensation: spec };
    if (await rt.store.update(key, current.version, patch, [ev], now)) return compensationNoted(rt, spec);
  }
}

/** What happens to a step in flight at the abort once it settles, in words: undone, corrected, or a person. */
function inFlightFate(tool: AnyTool | undefined): string {
  if (!tool) return "if it happens, an operator will be asked to undo it (its tool is no longer in the catalog)";
  if (tool.irreversible) {
    return tool.corrective
      ? "if it happens, it cannot be undone and will be followed by its correction when it settles"
      : "if it happens, it cannot be undone, and an operator will be asked to correct it";
  }
  return tool.compensation
    ? "it will be undone when it settles"
    : "if it happens, it stays (its tool declares no compensation)";
}

/** Puts an UNKNOWN effect of an aborted run in the human queue (`RUN_ABORTED`), unless it waits there already. */
async function queueAborted(rt: Runtime, record: IntentRecord, why: string): Promise<void> {
  for (let i = 0; i < 3; i++) {
    const current = await rt.store.get(record.key);
    if (current?.status !== "UNKNOWN") return;
    if (current.needsHuman && current.error?.code === "RUN_ABORTED") return;
    const now = rt.clock.nowEpochMs();
    const error = { code: "RUN_ABORTED" as const, message: `${why}: confirm it, and compensate it if it happened` };
    const updated = await rt.store.update(
      record.key,
      current.version,
      {
        needsHuman: true,
        resolution: null,
        error,
        ...recheckAt(current, humanRecheckAt(rt, rt.tools.get(record.tool), current.reconcileSweeps, now)),
      },
      [event(rt, record.key, "needs_human", { code: error.code, reason: error.message })],
      now,
    );
    if (updated) return;
  }
}

async function markForHuman(
  rt: Runtime,
  record: IntentRecord,
  code: "IRREVERSIBLE_NEEDS_CORRECTION" | "COMPENSATION_FAILED",
  why: string,
): Promise<void> {
  const now = rt.clock.nowEpochMs();
  const current = (await rt.store.get(record.key)) ?? record;
  if (current.needsHuman) return;
  await rt.store.update(
    record.key,
    current.version,
    { needsHuman: true, error: { code, message: why } },
    [event(rt, record.key, "needs_human", { code, reason: why })],
    now,
  );
}

function summarise(runId: string, steps: StepReport[]): string {
  const count = (o: StepOutcome) => steps.filter((s) => s.outcome === o).length;
  const parts = [
    [count("compensated"), "effect(s) reversed"],
    [count("corrected"), "irreversible effect(s) followed by a correction"],
    [count("no_effect"), "step(s) had no effect"],
    [count("no_compensation"), "effect(s) stay (no compensation declared)"],
    [count("in_flight"), "step(s) still in flight (undone when they settle)"],
    [
      count("not_confirmed") + count("needs_correction") + count("compensation_failed") + count("compensation_unknown"),
      "step(s) wait for an operator",
    ],
  ]
    .filter(([n]) => (n as number) > 0)
    .map(([n, what]) => `${n} ${what}`);
  const detail = steps.map((s) => ` ${s.stepId}: ${s.message}`).join("");
  return `Run ${runId} aborted: ${parts.join(", ") || "nothing to undo"}.${detail} Do not redo or undo these steps yourself; tell the user what was reversed and what an operator will confirm.`;
}
