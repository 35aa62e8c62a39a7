/**
 * The decision of a reconciliation (DESIGN.md rule 5), as one pure function: the evidence the
 * probes gathered, the record, its tool and who is reconciling → what to do. No clock, no store, no
 * I/O: every fact it needs comes in {@link DecisionInput}, and a fact that costs a round trip (the
 * store's clock) is asked for with a `read_store_clock` decision instead of being read up front.
 */
import type { ReconcileTrigger } from "./human-queue.ts";
import type { IntentRecord } from "./intent-store.ts";
import { settlesAtForLease } from "./lease.ts";
import type { ReconcileEvidence } from "./reconcile-evidence.ts";
import type { ReasonCode } from "./statuses.ts";
import type { AnyTool } from "./tool.ts";
import { toolKindPolicy } from "./tool-kind-policy.ts";

/** What the decision reads of a tool. */
export type DecisionTool = Pick<
  AnyTool,
  "kind" | "probe" | "probeByIdentity" | "resendWhenAbsent" | "settleMs" | "timeoutMs"
>;

/** What the decision reads of a record. */
export type DecisionRecord = Pick<IntentRecord, "needsHuman" | "error" | "reconcileSweeps" | "settlesAtEpochMs">;

/** Everything {@link decideReconcile} decides on. */
export interface DecisionInput {
  evidence: ReconcileEvidence;
  record: DecisionRecord;
  tool: DecisionTool;
  trigger: ReconcileTrigger;
  /** The record is within the tool's key retention (`keyRetentionMs`, by the store's clock). */
  keyValid: boolean;
  /** Sweeper passes after which a resend that brings no outcome goes to a person. */
  maxReconcileSweeps: number;
  /** The store's clock (epoch ms), read after the probes; supplied when a `read_store_clock` decision asked for it. */
  storeNowEpochMs?: number;
}

/** What reconciliation does next. */
export type ReconcileDecision =
  /** Answer with the record as it is (a person decides, or nothing may be learnt or sent now). */
  | { kind: "leave" }
  /** SUCCEEDED `found`, with the effect a probe found. */
  | { kind: "settle_found"; effect: unknown }
  /** FAILED_NO_EFFECT: the remote's stored refusal of the key's only request. */
  | { kind: "settle_refused"; answer: { detail: string; httpStatus?: number } }
  /**
   * Resend once with the same key and the persisted arguments; `reconcileSweeps` is written with it.
   * `readBack`: a probe found the request's item in an unclear state and the remote dedupes the key,
   * so the resend reads back the remote's stored answer to the original — a refusal then is the
   * original's (FAILED_NO_EFFECT), unlike rule 5f's refused resend.
   */
  | { kind: "resend"; why: string; reconcileSweeps: number; readBack?: true }
  /**
   * To the human queue with `code` and `message`. `reconcileSweeps`, when given, is the count the
   * record goes there with (this sweep already counted: `trigger` is then `call`).
   */
  | { kind: "to_human"; code: ReasonCode; message: string; trigger: ReconcileTrigger; reconcileSweeps?: number }
  /**
   * Stays UNKNOWN with `code` and `message`; due again at `recheckAtEpochMs` when given (a wait, not
   * a lack of evidence); `settlesAtEpochMs` is written when given.
   */
  | {
      kind: "stay_unknown";
      code: ReasonCode;
      message: string;
      trigger: ReconcileTrigger;
      recheckAtEpochMs?: number;
      settlesAtEpochMs?: number;
    }
  /** Decide again with {@link DecisionInput.storeNowEpochMs}: the decision turns on the store's clock. */
  | { kind: "read_store_clock" };

/** A resend the remote deduplicates needs no proof of absence (the key is still remembered). */
function deduped(tool: DecisionTool, keyValid: boolean): boolean {
  return toolKindPolicy(tool.kind).remoteDedupesKey && keyValid;
}

/**
 * Whether absence must be proof (rule 5b): the resend would not be deduplicated, the tool resends on
 * absence and declares a settle window. Then the probe rounds that count run after the window, by
 * the store's clock.
 */
export function absenceMustBeProof(tool: DecisionTool, keyValid: boolean): boolean {
  return !deduped(tool, keyValid) && tool.resendWhenAbsent && tool.settleMs !== undefined;
}

const READ_STORE_CLOCK: ReconcileDecision = { kind: "read_store_clock" };

/**
 * Decides what a reconciliation does with what its probes showed (rule 5). Pure and exhaustive:
 * found → settle; found in an unclear state → read back the stored answer or a person; a refusal
 * under the key → settle as no effect; an ambiguous identity match → a
 * person; waiting for a person → stays there; absent → resend only when that is safe (rule 5b),
 * else a person or a wait; no evidence → stays UNKNOWN (or a person once the key has expired
 * without an identity probe). A resend is held back by a running `Retry-After` and by the
 * sweeper's bound on passes.
 */
export function decideReconcile(input: DecisionInput): ReconcileDecision {
  const { evidence, record, trigger } = input;
  switch (evidence.kind) {
    case "not_gathered":
      return { kind: "leave" };
    case "no_probe":
      return decideWithoutProbe(input);
    case "found":
      return { kind: "settle_found", effect: evidence.effect };
    case "found_unclear":
      return decideUnclear(input, evidence.why);
    case "refused_under_key":
      return { kind: "settle_refused", answer: evidence.answer };
    case "ambiguous_match":
      return { kind: "to_human", code: "AMBIGUOUS_IDENTITY_MATCH", message: evidence.why, trigger };
    case "absent":
      return record.needsHuman
        ? staysWithPerson(input)
        : decideAbsent(input, evidence.rounds, evidence.lastRoundAtEpochMs);
    case "no_evidence":
      if (record.needsHuman) return staysWithPerson(input);
      if (!input.tool.probeByIdentity && !(input.tool.probe && input.keyValid)) {
        return {
          kind: "to_human",
          code: "KEY_RETENTION_EXPIRED",
          message: "key retention expired; only an identity probe could prove absence",
          trigger,
        };
      }
      return {
        kind: "stay_unknown",
        code: evidence.lastFailure?.code ?? "PROBE_FAILED",
        message: evidence.lastFailure?.message ?? "no evidence either way",
        // A sweeper pass that could not run a single round for lack of budget does not count
        // towards the human queue (or a short lease would send records there unprobed).
        trigger: evidence.starved && trigger === "sweeper" ? "call" : trigger,
      };
    default:
      return unknownEvidence(evidence);
  }
}

function unknownEvidence(evidence: never): never {
  throw new Error(`unknown reconcile evidence: ${JSON.stringify(evidence)}`);
}

/**
 * A probe found the request's item but cannot tell whether it took effect (rule 5a: no proof of
 * success). Where the remote dedupes the key and still remembers it, a same-key resend reads back
 * its stored answer to the original (issue 21 §5); otherwise a person decides (`FOUND_STATE_UNKNOWN`).
 * Never while a person already decides, nor for a run being aborted.
 */
function decideUnclear(input: DecisionInput, why: string): ReconcileDecision {
  const { record, tool, trigger, keyValid } = input;
  if (record.needsHuman) return staysWithPerson(input);
  if (trigger !== "abort" && deduped(tool, keyValid)) {
    return decideResend(
      input,
      `a probe found the request's item, but ${why}; reading back the remote's stored answer under the same key`,
      true,
    );
  }
  return {
    kind: "to_human",
    code: "FOUND_STATE_UNKNOWN",
    message: `a probe found the request's item, but ${why}: that proves delivery, not the effect; a person decides`,
    trigger,
  };
}

/** A tool without probes: nothing can be learnt; resend only what the remote deduplicates. */
function decideWithoutProbe(input: DecisionInput): ReconcileDecision {
  const { record, tool, trigger, keyValid } = input;
  // Waiting for a person: nothing can be learnt without a probe, and nothing is resent on its own.
  // Nor is a step of a run being aborted: an abort must not create the effect it would undo.
  if (record.needsHuman || trigger === "abort") return { kind: "leave" };
  if (deduped(tool, keyValid)) return decideResend(input, "keyed tool without probe; key still within retention");
  // An unsafe remote never deduplicated on the key, so its age is no reason (field case T30).
  const unsafe = toolKindPolicy(tool.kind).remoteIgnoresKey;
  return {
    kind: "to_human",
    code: unsafe || keyValid ? "NO_PROBE" : "KEY_RETENTION_EXPIRED",
    message: unsafe ? "unsafe tool without a probe" : "key retention expired and no probe",
    trigger,
  };
}

/** Waiting for a person: only found evidence settles it; nothing is ever resent on its own. */
function staysWithPerson({ record, trigger }: DecisionInput): ReconcileDecision {
  return {
    kind: "to_human",
    code: record.error?.code ?? "NO_PROBE",
    message: record.error?.message ?? "waiting for an operator",
    trigger,
  };
}

/** Every counting probe said absent in every round: resend, unless absence proves nothing (yet). */
function decideAbsent(input: DecisionInput, rounds: number, lastRoundAt: number | null): ReconcileDecision {
  const { record, tool, trigger } = input;
  if (!tool.resendWhenAbsent) {
    return {
      kind: "to_human",
      code: "PROBES_ABSENT_NO_DEDUPE",
      message:
        tool.settleMs === undefined
          ? "probes found nothing, but the tool declares no settle window (settleMs), so absence proves nothing: the original may still land, and the remote cannot deduplicate a resend"
          : "probes found nothing, but the tool does not allow a resend on absence (resendWhenAbsent: false)",
      trigger,
    };
  }
  if (!deduped(tool, input.keyValid)) {
    if (tool.settleMs === undefined) {
      return {
        kind: "to_human",
        code: "PROBES_ABSENT_NO_DEDUPE",
        message: "probes found nothing, but the tool declares no settle window, so absence proves nothing",
        trigger,
      };
    }
    // A record with no settle time recorded (written before settle windows existed) gets one
    // counted from now and waits for it.
    if (record.settlesAtEpochMs === null && input.storeNowEpochMs === undefined) return READ_STORE_CLOCK;
    const settlesAt = record.settlesAtEpochMs ?? (settlesAtForLease(tool, input.storeNowEpochMs!) as number);
    if (lastRoundAt === null || lastRoundAt < settlesAt) {
      return {
        kind: "stay_unknown",
        code: "ABSENCE_NOT_CONCLUSIVE",
        message: `probes found nothing, but the remote may still apply or show the effect until ${new Date(settlesAt).toISOString()}; re-probing then`,
        trigger,
        recheckAtEpochMs: settlesAt,
        ...(record.settlesAtEpochMs === null ? { settlesAtEpochMs: settlesAt } : {}),
      };
    }
  }
  if (trigger === "abort") {
    // Absent, but its run is being aborted: an abort must not create the effect it would undo.
    return {
      kind: "stay_unknown",
      code: "RUN_ABORTED",
      message: `absent after ${rounds} spaced probes; its run is being aborted, so it is not resent`,
      trigger,
    };
  }
  return decideResend(input, `absent after ${rounds} spaced probes`);
}

/**
 * A resend is due (`why`). The sweeper's resends count as its passes: a remote that never answers
 * sends the record to a person after `maxReconcileSweeps`, instead of being resent forever. A
 * `Retry-After` the remote gave and the store's clock has not reached holds it back (issue 9 §7).
 */
function decideResend(input: DecisionInput, why: string, readBack = false): ReconcileDecision {
  const { record, trigger } = input;
  const sweeps = record.reconcileSweeps + (trigger === "sweeper" ? 1 : 0);
  if (trigger === "sweeper" && sweeps >= input.maxReconcileSweeps) {
    return {
      kind: "to_human",
      code: record.error?.code ?? "AMBIGUOUS",
      message: `resend due (${why}), but ${sweeps} sweeps brought no outcome; a person decides`,
      trigger: "call",
      reconcileSweeps: sweeps,
    };
  }
  const notBefore = record.error?.retryNotBeforeEpochMs;
  if (notBefore !== undefined) {
    if (input.storeNowEpochMs === undefined) return READ_STORE_CLOCK;
    if (notBefore > input.storeNowEpochMs) {
      return {
        kind: "stay_unknown",
        code: "RETRY_AFTER",
        message: `resend due (${why}), but the remote asked to wait until ${new Date(notBefore).toISOString()}`,
        trigger: "call",
        recheckAtEpochMs: notBefore,
      };
    }
  }
  return { kind: "resend", why, reconcileSweeps: sweeps, ...(readBack ? { readBack: true as const } : {}) };
}
