/**
 * Gathering the evidence of a reconciliation (DESIGN.md rule 5a, 5c, 5g): the spaced probe rounds,
 * summed up as one {@link ReconcileEvidence}. What to do with it is decided elsewhere
 * (`reconcile-decision.ts`); this file only probes, spaces rounds and records them.
 */
import type { Deadline } from "./deadline.ts";
import { isDeadlineExceededError } from "./errors.ts";
import type { ReconcileTrigger } from "./human-queue.ts";
import type { IntentEvent, IntentRecord } from "./intent-store.ts";
import { storeNow } from "./lease.ts";
import { type ProbeProgress, probeProgress } from "./probe-progress.ts";
import { judgeIdentityMatch, type ProbeKind, runProbe } from "./probing.ts";
import { event } from "./record-events.ts";
import type { Runtime } from "./runtime.ts";
import { sentOnceUnderWireKey } from "./settle.ts";
import type { AnyTool } from "./tool.ts";

/** Why a pass gathered no evidence either way: a probe failed, or the deadline left no budget for a round. */
export interface ProbeFailure {
  code: "PROBE_FAILED" | "DEADLINE_EXCEEDED";
  message: string;
}

/**
 * What the probes of one reconciliation pass showed. `events` are the probe events not yet on
 * record (earlier rounds are appended as each ends); the decision's performer writes them.
 */
export type ReconcileEvidence =
  /**
   * Not looked for: part of the call took effect (`partial_effect`), or a client's own retry wrote
   * it more than once (`repeated_write`, issue 21 §2): a probe finding "the effect" proves nothing
   * about the rest, nor how many there are.
   */
  | { kind: "not_gathered"; why: "partial_effect" | "repeated_write" }
  /** The tool has neither a key probe nor an identity probe. */
  | { kind: "no_probe" }
  /** A probe found this record's effect (an identity match only when it is not another record's: rule 5g). */
  | { kind: "found"; probe: ProbeKind; effect: unknown; events: IntentEvent[] }
  /**
   * A probe found this record's item (delivery proven) in a state that does not tell whether the
   * effect happened, or declares no states (rule 5a): no proof of success. `why` says what it saw.
   */
  | { kind: "found_unclear"; probe: ProbeKind; item: unknown; why: string; events: IntentEvent[] }
  /** The key probe read back the remote's refusal of this key's only request: proof of no effect. */
  | { kind: "refused_under_key"; answer: { detail: string; httpStatus?: number }; events: IntentEvent[] }
  /** An identity match that may be this record's or another's (the last such reason). */
  | { kind: "ambiguous_match"; why: string; events: IntentEvent[] }
  /**
   * Every counting probe answered "absent" in every round (`rounds` in all, this attempt's earlier
   * passes included). `lastRoundAtEpochMs` is the store's clock when the last round started, read
   * only where absence must be proof ({@link GatherInput.absenceMustBeProof}), else null.
   */
  | { kind: "absent"; rounds: number; lastRoundAtEpochMs: number | null; events: IntentEvent[] }
  /**
   * Neither found nor conclusively absent: a probe failed, a refusal proved nothing, no probe counts
   * (key expired, no identity probe), or the budget ran out. `lastFailure` is the last failure seen;
   * `starved` when the budget ran out before this pass could run any round of its own.
   */
  | { kind: "no_evidence"; lastFailure: ProbeFailure | null; starved: boolean; events: IntentEvent[] };

/** What {@link gatherEvidence} needs besides the runtime. */
export interface GatherInput {
  tool: AnyTool;
  record: IntentRecord;
  deadline: Deadline;
  trigger: ReconcileTrigger;
  /** No probe round of the current attempt is on record (see `reconcile`'s `freshAttempt`). */
  freshAttempt: boolean;
  /** The record is within the tool's key retention (by the store's clock): a key probe's "absent" counts. */
  keyValid: boolean;
  /** Absence counts only after the settle window, judged by the store's clock (rule 5b). */
  absenceMustBeProof: boolean;
}

type ProbeFn = NonNullable<AnyTool["probe"]>;

/** The probes a tool has, the key probe first. */
function probesOf(tool: AnyTool): [ProbeKind, ProbeFn][] {
  const probes: [ProbeKind, ProbeFn][] = [];
  if (tool.probe) probes.push(["key", tool.probe]);
  if (tool.probeByIdentity) probes.push(["identity", tool.probeByIdentity]);
  return probes;
}

/** What the rounds of one pass have shown so far. */
interface PassState {
  /** Probe events not yet appended. */
  events: IntentEvent[];
  allAbsent: boolean;
  rounds: number;
  lastRoundAt: number | null;
  ambiguous: string | null;
  lastFailure: ProbeFailure | null;
}

/** The evidence that ends a pass at once. */
type Settling = Extract<ReconcileEvidence, { kind: "found" | "found_unclear" | "refused_under_key" }>;

/**
 * Runs the spaced probe rounds of one reconciliation pass (`rt.probe.attempts` rounds, spaced by
 * `rt.probe.spacingMs`, each probe bounded by `rt.probe.timeoutMs` and the deadline) and sums up what
 * they showed. Rounds of this attempt already on record count (issue 12), except where absence must
 * be proof or the record has just left PENDING. Each round but the last is appended to the timeline
 * as it ends. Stops at the first proof (found, an item found in an unclear state, or a refusal under the key).
 * @throws whatever the store throws (reading the timeline, appending rounds, the store's clock).
 */
export async function gatherEvidence(rt: Runtime, input: GatherInput): Promise<ReconcileEvidence> {
  const { tool, record, deadline } = input;
  if (record.needsHuman && record.error?.code === "PARTIAL_EFFECT")
    return { kind: "not_gathered", why: "partial_effect" };
  if (record.needsHuman && record.error?.code === "REPEATED_WRITE")
    return { kind: "not_gathered", why: "repeated_write" };
  const probes = probesOf(tool);
  if (probes.length === 0) return { kind: "no_probe" };
  // After key retention, a key probe's "not found" proves nothing (rule 5c); its "found" still does.
  const counting = probes.filter(([kind]) => kind === "identity" || input.keyValid).map(([kind]) => kind);
  const progress = await roundsOnRecord(rt, input, counting);
  const skip = Math.min(progress.clean, rt.probe.attempts - 1);
  const pass: PassState = {
    events: [],
    allAbsent: counting.length > 0,
    rounds: skip,
    lastRoundAt: null,
    ambiguous: null,
    lastFailure: null,
  };
  for (let i = skip; i < rt.probe.attempts; i++) {
    const round = progress.nextRound + (i - skip);
    if (i > 0) await spaceRound(rt, deadline, i, i === skip ? progress.lastRoundAtEpochMs : null);
    let timeoutMs: number;
    try {
      timeoutMs = deadline.timeoutFor(rt.probe.timeoutMs, rt.reserveMs, rt.minCallBudgetMs);
    } catch (error) {
      if (!isDeadlineExceededError(error)) throw error;
      pass.lastFailure = { code: "DEADLINE_EXCEEDED", message: "no budget left to probe; the sweeper will go on" };
      pass.allAbsent = false;
      break;
    }
    pass.rounds++;
    if (input.absenceMustBeProof) pass.lastRoundAt = await storeNow(rt);
    const settling = await probeRound(rt, input, probes, counting, round, timeoutMs, pass);
    if (settling) return settling;
    // The round is on record at once, so a crash after it does not cost it (probeProgress).
    if (i < rt.probe.attempts - 1) await rt.store.appendEvents(pass.events.splice(0));
  }
  return summed(pass, rt.probe.attempts, skip);
}

/**
 * Rounds already run for this attempt (a pass interrupted by a crash, or an earlier pass) count: a
 * restarted executor goes on from there, but always runs at least one round now (issue 12). Not
 * where absence must be proof: there every deciding round runs after the settle window, by the
 * store's clock, and the rounds on record carry only a replica's clock. Nor where the record has
 * just left PENDING: rounds run while it is UNKNOWN, and a new attempt starts PENDING, so none of
 * this attempt's is on record (bar a stray one from a reconciler past its lease); starting afresh
 * can only add rounds.
 */
async function roundsOnRecord(rt: Runtime, input: GatherInput, counting: ProbeKind[]): Promise<ProbeProgress> {
  if (input.absenceMustBeProof || input.freshAttempt || input.trigger === "after_unknown") {
    return { clean: 0, nextRound: 1, lastRoundAtEpochMs: null };
  }
  return probeProgress(await rt.store.listEvents(input.record.key), counting);
}

/** Waits before round `i` (0-based in the pass), spaced from the previous round, also when that one ran before a restart. */
async function spaceRound(rt: Runtime, deadline: Deadline, i: number, previousAt: number | null): Promise<void> {
  const waitMs =
    previousAt === null ? i * rt.probe.spacingMs : previousAt + i * rt.probe.spacingMs - rt.clock.nowEpochMs();
  if (waitMs > 0) await rt.clock.sleep(Math.min(waitMs, deadline.remainingMs() / 4));
}

/** One round: every probe once, the key probe first. Returns the proof that ends the pass, if any. */
async function probeRound(
  rt: Runtime,
  input: GatherInput,
  probes: [ProbeKind, ProbeFn][],
  counting: ProbeKind[],
  round: number,
  timeoutMs: number,
  pass: PassState,
): Promise<Settling | null> {
  const { tool, record } = input;
  let keyAbsent = false;
  for (const [kind, probe] of probes) {
    const answer = await runProbe(rt, tool, record, kind, probe, timeoutMs, round);
    pass.events.push(answer.event);
    if (answer.kind === "found" || answer.kind === "unclear") {
      const settling = (): Settling =>
        answer.kind === "found"
          ? { kind: "found", probe: kind, effect: answer.found, events: pass.events }
          : { kind: "found_unclear", probe: kind, item: answer.found, why: answer.why, events: pass.events };
      if (kind === "key") return settling();
      const verdict = await judgeIdentityMatch(rt, tool, record, answer.found, keyAbsent);
      if (verdict.kind === "ours") return settling();
      const owners = verdict.owners.map((o) => ({ ...o }));
      pass.events.push(
        event(rt, record.key, "probe", { probe: kind, round, match: verdict.kind, why: verdict.why, owners }),
      );
      // Another record's effect is no evidence of this one's absence either: an identity probe
      // answers with one match, which may hide this record's own. Only a valid key probe's
      // "absent" in the same round lets the match count as absent (rule 5g).
      if (verdict.kind === "ambiguous" || !keyAbsent) pass.ambiguous = verdict.why;
      continue;
    }
    if (answer.kind === "refused") {
      // The remote's stored answer under this key is the original's only if nothing else was
      // ever sent under it (a same-key resend's refusal would be stored there too: rule 5f).
      if (sentOnceUnderWireKey(record)) return { kind: "refused_under_key", answer, events: pass.events };
      if (counting.includes(kind)) pass.allAbsent = false; // no evidence either way
      continue;
    }
    if (answer.kind === "absent" && kind === "key" && input.keyValid) keyAbsent = true;
    if (answer.kind === "failed") {
      pass.lastFailure = { code: "PROBE_FAILED", message: answer.message };
      if (counting.includes(kind)) pass.allAbsent = false;
    }
  }
  return null;
}

/** The evidence of a pass that found no proof. */
function summed(pass: PassState, attempts: number, skip: number): ReconcileEvidence {
  const { events } = pass;
  if (pass.ambiguous !== null) return { kind: "ambiguous_match", why: pass.ambiguous, events };
  if (pass.allAbsent && pass.rounds === attempts) {
    return { kind: "absent", rounds: pass.rounds, lastRoundAtEpochMs: pass.lastRoundAt, events };
  }
  // A pass that could not run a single round for lack of budget gathered no evidence either way.
  const starved = pass.lastFailure?.code === "DEADLINE_EXCEEDED" && pass.rounds === skip;
  return { kind: "no_evidence", lastFailure: pass.lastFailure, starved, events };
}
