/**
 * Late proof (DESIGN.md rules 10 and 16): a send's answer that reaches its process after another one
 * took the record over. It is kept as a `late_answer` event and decides the record where it still
 * can; where it contradicts a decision already made, it reopens the record for a person.
 */
import { contradicts, type LateEvidence, reopenForPerson } from "./contradicting-evidence.ts";
import type { Envelope } from "./envelope.ts";
import { humanRecheckAt } from "./human-queue.ts";
import { type IntentError, type IntentEvent, type IntentPatch, type IntentRecord, wireKey } from "./intent-store.ts";
import { recheckAt } from "./lease.ts";
import { envelopeFor } from "./record-envelope.ts";
import { event } from "./record-events.ts";
import type { Runtime } from "./runtime.ts";
import type { AnyTool } from "./tool.ts";

/** What a late answer did: settled or reopened the record, left it UNKNOWN, or changed nothing (`lost`). */
export type LateAnswerResult =
  | { kind: "settled"; record: IntentRecord; envelope: Envelope }
  | { kind: "unknown"; record: IntentRecord }
  | { kind: "lost"; record: IntentRecord | null };

/**
 * Rule 10: this send's answer arrived after another process took the record over (a sweeper after
 * the lease, by the store's clock). The answer is evidence: it is kept as a `late_answer` event and
 * decides the record where it still can (see {@link latePatch}); where it contradicts a decision
 * (rule 16) it reopens the record for a person ({@link reopenForPerson}).
 * @param mine - the record as this send took it (its attempt and wire key).
 * @param w - the outcome this send would have written.
 */
export async function lateAnswer(
  rt: Runtime,
  tool: AnyTool | undefined,
  mine: IntentRecord,
  w: { patch: IntentPatch; events: IntentEvent[]; now: number },
): Promise<LateAnswerResult> {
  for (let round = 0; round < 3; round++) {
    const current = await rt.store.get(mine.key);
    if (!current) return { kind: "lost", record: null };
    const late = event(rt, mine.key, "late_answer", {
      attempt: mine.attempt,
      outcome: w.patch.status ?? "UNKNOWN",
      ...(w.patch.error?.code ? { code: w.patch.error.code } : {}),
      currentStatus: current.status,
    });
    if (current.status === "PENDING" && current.attempt !== mine.attempt && w.patch.status === "SUCCEEDED") {
      // Another attempt is in flight (the record is its call's, rule 2): weigh this effect against
      // that attempt's outcome once it has one, in the background (this answer is late already).
      await rt.store.appendEvents([...w.events, late]);
      weighAfterInFlight(rt, tool, mine, w, current);
      return { kind: "lost", record: current };
    }
    const decided = latePatch(rt, tool, mine, current, w.patch);
    if (!decided) {
      await rt.store.appendEvents([...w.events, late]);
      return { kind: "lost", record: current };
    }
    const events = [...w.events, late, ...decided.events];
    const updated = await rt.store.update(mine.key, current.version, decided.patch, events, rt.clock.nowEpochMs());
    if (updated) {
      return updated.status === "UNKNOWN"
        ? { kind: "unknown", record: updated }
        : { kind: "settled", record: updated, envelope: envelopeFor(rt, updated, false) };
    }
  }
  return { kind: "lost", record: await rt.store.get(mine.key) };
}

/** How often a late answer waiting for an attempt in flight looks at the record again, ms. */
const IN_FLIGHT_POLL_MS = 200;
/** How long past the in-flight attempt's lease a waiting late answer keeps looking, ms (then the sweeper has it). */
const IN_FLIGHT_GRACE_MS = 10_000;

/**
 * A late effect that met another attempt in flight: waits (polling, in the background, tracked in
 * `rt.pendingLateEvidence`) until that attempt has an outcome, or a sweeper took it over, then weighs
 * the effect against the record as it is (settle, or reopen for a person: a second effect beside
 * a SUCCEEDED attempt, an effect beside a FAILED_NO_EFFECT or UNKNOWN one). Gives up after the
 * attempt's lease + {@link IN_FLIGHT_GRACE_MS}, leaving the `late_answer` event already written.
 */
function weighAfterInFlight(
  rt: Runtime,
  tool: AnyTool | undefined,
  mine: IntentRecord,
  w: { patch: IntentPatch; events: IntentEvent[]; now: number },
  inFlight: IntentRecord,
): void {
  if (rt.pendingLateEvidence.has(mine.key)) return;
  const giveUpAt = inFlight.leaseUntilEpochMs + IN_FLIGHT_GRACE_MS;
  const weigh = async () => {
    while (rt.clock.nowEpochMs() < giveUpAt) {
      await rt.clock.sleep(IN_FLIGHT_POLL_MS);
      const current = await rt.store.get(mine.key);
      if (!current) return;
      if (current.status === "PENDING" && current.version === inFlight.version) continue;
      for (let round = 0; round < 3; round++) {
        const now = (await rt.store.get(mine.key)) ?? null;
        if (!now || now.status === "PENDING") break;
        const decided = latePatch(rt, tool, mine, now, w.patch);
        if (!decided) return;
        if (await rt.store.update(mine.key, now.version, decided.patch, decided.events, rt.clock.nowEpochMs())) return;
      }
      return;
    }
  };
  const done: Promise<void> = weigh()
    .catch((error: unknown) => rt.onBackgroundWriteError?.(error, mine.key))
    .finally(() => {
      if (rt.pendingLateEvidence.get(mine.key) === done) rt.pendingLateEvidence.delete(mine.key);
    });
  rt.pendingLateEvidence.set(mine.key, done);
}

/**
 * What a late answer changes on the record as it is now, or null for nothing:
 * - an effect (SUCCEEDED) settles an UNKNOWN record (also one in the human queue); a record waiting
 *   because its run was aborted stays waiting (the effect must be compensated);
 * - no effect (FAILED_NO_EFFECT) settles an UNKNOWN record when no other attempt was sent since;
 * - a partial effect sends the record to the human queue whatever a probe found meanwhile;
 * - an answer that contradicts a settled record or a person's decision (a late effect after "no
 *   effect", a second effect beside a SUCCEEDED attempt, a refusal of an effect a probe or a person
 *   confirmed) reopens it for a person with both pieces of evidence (rule 16, {@link contradicts}).
 */
function latePatch(
  rt: Runtime,
  tool: AnyTool | undefined,
  mine: IntentRecord,
  current: IntentRecord,
  answer: IntentPatch,
): { patch: IntentPatch; events: IntentEvent[] } | null {
  const sameAttempt = current.attempt === mine.attempt;
  if (answer.status === "SUCCEEDED" || answer.status === "FAILED_NO_EFFECT") {
    const evidence: LateEvidence = {
      source: "late_answer",
      outcome: answer.status,
      attempt: mine.attempt,
      wireKey: wireKey(mine),
      ...(answer.error?.httpStatus !== undefined ? { httpStatus: answer.error.httpStatus } : {}),
      ...(answer.status === "SUCCEEDED" && answer.result !== undefined ? { detail: answer.result } : {}),
    };
    if (contradicts(current, tool, evidence)) return reopenForPerson(rt, current, evidence, answer);
  }
  switch (answer.status) {
    case "SUCCEEDED": {
      if (current.status !== "UNKNOWN") return null;
      const aborted = current.needsHuman && current.error?.code === "RUN_ABORTED";
      return {
        patch: aborted
          ? { ...answer, resolution: "found", needsHuman: true, error: foundAfterAbort() }
          : { ...answer, resolution: "found", needsHuman: false },
        events: [],
      };
    }
    case "FAILED_NO_EFFECT":
      return current.status === "UNKNOWN" && sameAttempt
        ? { patch: { ...answer, resolution: null, needsHuman: false }, events: [] }
        : null;
    default:
      // Part of it took effect, or a client's own retry wrote it twice (issue 21 §2): a person decides.
      if (
        !["PARTIAL_EFFECT", "REPEATED_WRITE"].includes(answer.error?.code ?? "") ||
        current.status === "FAILED_NO_EFFECT"
      )
        return null;
      return {
        patch: {
          status: "UNKNOWN",
          needsHuman: true,
          resolution: null,
          error: answer.error,
          ...recheckAt(current, humanRecheckAt(rt, undefined, 0, rt.clock.nowEpochMs())),
          settlesAtEpochMs: null,
        },
        events: [],
      };
  }
}

/** The error of an effect found after its run was aborted: a person compensates it. */
export function foundAfterAbort(): IntentError {
  return {
    code: "RUN_ABORTED",
    message:
      "the effect was found after its run was aborted: it was not compensated; compensate it (operator `compensate`)",
  };
}
