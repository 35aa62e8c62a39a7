import { describe, expect, it } from "vitest";
import type { IntentError } from "./intent-store.ts";
import {
  absenceMustBeProof,
  type DecisionInput,
  type DecisionRecord,
  type DecisionTool,
  decideReconcile,
  type ReconcileDecision,
} from "./reconcile-decision.ts";
import type { ReconcileEvidence } from "./reconcile-evidence.ts";

// DESIGN.md rule 5, one row per case: the decision alone, no clock, no store, no sockets.

const probe = async () => null;
const T0 = Date.UTC(2026, 0, 1);
const iso = (ms: number) => new Date(ms).toISOString();

const keyedNoProbe: DecisionTool = { kind: "idempotent_by_key", resendWhenAbsent: true, timeoutMs: 5_000 };
const keyed: DecisionTool = { ...keyedNoProbe, probe };
const keyedWithWindow: DecisionTool = { ...keyed, settleMs: 10_000 };
const unsafeNoProbe: DecisionTool = { kind: "unsafe", resendWhenAbsent: false, timeoutMs: 5_000 };
const unsafeNoWindow: DecisionTool = { ...unsafeNoProbe, probe };
const unsafeWithWindow: DecisionTool = { ...unsafeNoWindow, resendWhenAbsent: true, settleMs: 10_000 };
const unsafeWindowNoResend: DecisionTool = { ...unsafeWithWindow, resendWhenAbsent: false };

const fresh: DecisionRecord = { needsHuman: false, error: null, reconcileSweeps: 0, settlesAtEpochMs: T0 + 15_000 };
const err = (code: IntentError["code"], message: string, extra: Partial<IntentError> = {}): IntentError => ({
  code,
  message,
  ...extra,
});
const waiting: DecisionRecord = { ...fresh, needsHuman: true, error: err("PROBES_ABSENT_NO_DEDUPE", "waits") };

const absent = (lastRoundAtEpochMs: number | null, rounds = 3): ReconcileEvidence => ({
  kind: "absent",
  rounds,
  lastRoundAtEpochMs,
  events: [],
});
const noEvidence = (
  lastFailure: Extract<ReconcileEvidence, { kind: "no_evidence" }>["lastFailure"],
  starved = false,
): ReconcileEvidence => ({ kind: "no_evidence", lastFailure, starved, events: [] });
const failed = { code: "PROBE_FAILED", message: "probe timed out" } as const;
const UNCLEAR_WHY = 'status = "requires_action" is none of the declared states';
const unclear: ReconcileEvidence = {
  kind: "found_unclear",
  probe: "key",
  item: { id: "ch_1", status: "requires_action" },
  why: UNCLEAR_WHY,
  events: [],
};
const unclearToHuman = (trigger: DecisionInput["trigger"]): ReconcileDecision => ({
  kind: "to_human",
  code: "FOUND_STATE_UNKNOWN",
  message: `a probe found the request's item, but ${UNCLEAR_WHY}: that proves delivery, not the effect; a person decides`,
  trigger,
});
const noBudget = { code: "DEADLINE_EXCEEDED", message: "no budget left to probe; the sweeper will go on" } as const;

interface Row {
  case: string;
  evidence: ReconcileEvidence;
  tool: DecisionTool;
  record?: DecisionRecord;
  trigger?: DecisionInput["trigger"];
  keyValid?: boolean;
  storeNowEpochMs?: number;
  expected: ReconcileDecision;
}

const MAX_SWEEPS = 5;

const rows: Row[] = [
  // Evidence that was not gathered, or cannot be.
  {
    case: "part of the call took effect (PARTIAL_EFFECT): a person decides, nothing probed",
    evidence: { kind: "not_gathered", why: "partial_effect" },
    tool: keyed,
    record: { ...fresh, needsHuman: true, error: err("PARTIAL_EFFECT", "half done") },
    expected: { kind: "leave" },
  },
  {
    case: "a client's own retry wrote it twice (REPEATED_WRITE, issue 21 §2): a person decides, nothing probed",
    evidence: { kind: "not_gathered", why: "repeated_write" },
    tool: unsafeNoWindow,
    record: { ...fresh, needsHuman: true, error: err("REPEATED_WRITE", "possibly more than one effect") },
    expected: { kind: "leave" },
  },
  {
    case: "no probe + the remote dedupes + key valid → resend (5b)",
    evidence: { kind: "no_probe" },
    tool: keyedNoProbe,
    expected: { kind: "resend", why: "keyed tool without probe; key still within retention", reconcileSweeps: 0 },
  },
  {
    case: "no probe + unsafe → NO_PROBE (5d)",
    evidence: { kind: "no_probe" },
    tool: unsafeNoProbe,
    expected: { kind: "to_human", code: "NO_PROBE", message: "unsafe tool without a probe", trigger: "call" },
  },
  {
    case: "no probe + unsafe + key expired → still NO_PROBE: its key never protected (field case T30)",
    evidence: { kind: "no_probe" },
    tool: unsafeNoProbe,
    keyValid: false,
    expected: { kind: "to_human", code: "NO_PROBE", message: "unsafe tool without a probe", trigger: "call" },
  },
  {
    case: "no probe + keyed + key expired → KEY_RETENTION_EXPIRED (5c)",
    evidence: { kind: "no_probe" },
    tool: keyedNoProbe,
    keyValid: false,
    expected: {
      kind: "to_human",
      code: "KEY_RETENTION_EXPIRED",
      message: "key retention expired and no probe",
      trigger: "call",
    },
  },
  {
    case: "no probe + waiting for a person → stays as it is, nothing resent",
    evidence: { kind: "no_probe" },
    tool: keyedNoProbe,
    record: waiting,
    expected: { kind: "leave" },
  },
  {
    case: "no probe + abort trigger → nothing resent (rule 13)",
    evidence: { kind: "no_probe" },
    tool: keyedNoProbe,
    trigger: "abort",
    expected: { kind: "leave" },
  },
  // Proof.
  {
    case: "found (even while waiting for a person) → settle found (5a)",
    evidence: { kind: "found", probe: "identity", effect: { id: "re_1" }, events: [] },
    tool: keyed,
    record: waiting,
    expected: { kind: "settle_found", effect: { id: "re_1" } },
  },
  // Found, but the item's state does not tell whether the effect happened (5a; issue 21 §5).
  {
    case: "found in an unclear state + the remote dedupes + key valid → read back the stored answer (same key)",
    evidence: unclear,
    tool: keyed,
    expected: {
      kind: "resend",
      why: `a probe found the request's item, but ${UNCLEAR_WHY}; reading back the remote's stored answer under the same key`,
      reconcileSweeps: 0,
      readBack: true,
    },
  },
  {
    case: "found in an unclear state + keyed + key expired → FOUND_STATE_UNKNOWN, never SUCCEEDED",
    evidence: unclear,
    tool: keyed,
    keyValid: false,
    expected: unclearToHuman("call"),
  },
  {
    case: "found in an unclear state + unsafe (no read-back possible) → FOUND_STATE_UNKNOWN",
    evidence: unclear,
    tool: unsafeWithWindow,
    trigger: "sweeper",
    expected: unclearToHuman("sweeper"),
  },
  {
    case: "found in an unclear state + abort trigger → a person, nothing resent (rule 13)",
    evidence: unclear,
    tool: keyed,
    trigger: "abort",
    expected: unclearToHuman("abort"),
  },
  {
    case: "found in an unclear state while waiting for a person → stays with the person, its reason kept",
    evidence: unclear,
    tool: keyed,
    record: waiting,
    expected: { kind: "to_human", code: "PROBES_ABSENT_NO_DEDUPE", message: "waits", trigger: "call" },
  },
  {
    case: "found in an unclear state, read-back due by the sweeper, sweeps exhausted → a person decides",
    evidence: unclear,
    tool: keyed,
    record: { ...fresh, reconcileSweeps: MAX_SWEEPS - 1, error: err("READ_TIMEOUT", "timed out") },
    trigger: "sweeper",
    expected: {
      kind: "to_human",
      code: "READ_TIMEOUT",
      message: `resend due (a probe found the request's item, but ${UNCLEAR_WHY}; reading back the remote's stored answer under the same key), but ${MAX_SWEEPS} sweeps brought no outcome; a person decides`,
      trigger: "call",
      reconcileSweeps: MAX_SWEEPS,
    },
  },
  {
    case: "the key probe read back the remote's refusal → settle refused (5a)",
    evidence: { kind: "refused_under_key", answer: { detail: "card declined", httpStatus: 402 }, events: [] },
    tool: keyed,
    expected: { kind: "settle_refused", answer: { detail: "card declined", httpStatus: 402 } },
  },
  {
    case: "ambiguous identity match → AMBIGUOUS_IDENTITY_MATCH, also while waiting (5g)",
    evidence: { kind: "ambiguous_match", why: "step s2 may own it", events: [] },
    tool: keyed,
    record: waiting,
    trigger: "sweeper",
    expected: { kind: "to_human", code: "AMBIGUOUS_IDENTITY_MATCH", message: "step s2 may own it", trigger: "sweeper" },
  },
  // Waiting for a person: only found evidence settles it.
  {
    case: "waiting for a person, probes absent → stays with the person, its reason kept",
    evidence: absent(T0 + 60_000),
    tool: keyed,
    record: waiting,
    expected: { kind: "to_human", code: "PROBES_ABSENT_NO_DEDUPE", message: "waits", trigger: "call" },
  },
  {
    case: "waiting for a person with no reason on record, no evidence → NO_PROBE 'waiting for an operator'",
    evidence: noEvidence(failed),
    tool: keyed,
    record: { ...fresh, needsHuman: true },
    trigger: "sweeper",
    expected: { kind: "to_human", code: "NO_PROBE", message: "waiting for an operator", trigger: "sweeper" },
  },
  // Absent.
  {
    case: "absent + the remote dedupes + key valid → resend with the same key (5b)",
    evidence: absent(null),
    tool: keyed,
    expected: { kind: "resend", why: "absent after 3 spaced probes", reconcileSweeps: 0 },
  },
  {
    case: "absent + keyed + key valid: the settle window does not matter",
    evidence: absent(null, 2),
    tool: keyedWithWindow,
    expected: { kind: "resend", why: "absent after 2 spaced probes", reconcileSweeps: 0 },
  },
  {
    case: "absent, resendWhenAbsent false, no settle window → PROBES_ABSENT_NO_DEDUPE",
    evidence: absent(null),
    tool: unsafeNoWindow,
    expected: {
      kind: "to_human",
      code: "PROBES_ABSENT_NO_DEDUPE",
      message:
        "probes found nothing, but the tool declares no settle window (settleMs), so absence proves nothing: the original may still land, and the remote cannot deduplicate a resend",
      trigger: "call",
    },
  },
  {
    case: "absent, resendWhenAbsent false with a settle window → PROBES_ABSENT_NO_DEDUPE",
    evidence: absent(T0 + 60_000),
    tool: unsafeWindowNoResend,
    expected: {
      kind: "to_human",
      code: "PROBES_ABSENT_NO_DEDUPE",
      message: "probes found nothing, but the tool does not allow a resend on absence (resendWhenAbsent: false)",
      trigger: "call",
    },
  },
  {
    case: "absent + keyed + key expired + no settle window → PROBES_ABSENT_NO_DEDUPE: absence proves nothing",
    evidence: absent(null),
    tool: keyed,
    keyValid: false,
    expected: {
      kind: "to_human",
      code: "PROBES_ABSENT_NO_DEDUPE",
      message: "probes found nothing, but the tool declares no settle window, so absence proves nothing",
      trigger: "call",
    },
  },
  {
    case: "absent before the settle window → ABSENCE_NOT_CONCLUSIVE until the settle time, pass not counted",
    evidence: absent(T0 + 14_999),
    tool: unsafeWithWindow,
    trigger: "sweeper",
    expected: {
      kind: "stay_unknown",
      code: "ABSENCE_NOT_CONCLUSIVE",
      message: `probes found nothing, but the remote may still apply or show the effect until ${iso(T0 + 15_000)}; re-probing then`,
      trigger: "sweeper",
      recheckAtEpochMs: T0 + 15_000,
    },
  },
  {
    case: "absent, no settle time on record (older record) → asks for the store's clock",
    evidence: absent(T0),
    tool: unsafeWithWindow,
    record: { ...fresh, settlesAtEpochMs: null },
    expected: { kind: "read_store_clock" },
  },
  {
    case: "absent, no settle time on record → one counted from the store's now (+ timeout + window), written",
    evidence: absent(T0),
    tool: unsafeWithWindow,
    record: { ...fresh, settlesAtEpochMs: null },
    storeNowEpochMs: T0 + 1_000,
    expected: {
      kind: "stay_unknown",
      code: "ABSENCE_NOT_CONCLUSIVE",
      message: `probes found nothing, but the remote may still apply or show the effect until ${iso(T0 + 16_000)}; re-probing then`,
      trigger: "call",
      recheckAtEpochMs: T0 + 16_000,
      settlesAtEpochMs: T0 + 16_000,
    },
  },
  {
    case: "absent at or after the settle window → resend an unsafe tool (5b)",
    evidence: absent(T0 + 15_000),
    tool: unsafeWithWindow,
    expected: { kind: "resend", why: "absent after 3 spaced probes", reconcileSweeps: 0 },
  },
  {
    case: "abort trigger + absent → RUN_ABORTED, not resent",
    evidence: absent(null),
    tool: keyed,
    trigger: "abort",
    expected: {
      kind: "stay_unknown",
      code: "RUN_ABORTED",
      message: "absent after 3 spaced probes; its run is being aborted, so it is not resent",
      trigger: "abort",
    },
  },
  {
    case: "abort trigger + absent before the settle window → the wait comes first",
    evidence: absent(T0),
    tool: unsafeWithWindow,
    trigger: "abort",
    expected: {
      kind: "stay_unknown",
      code: "ABSENCE_NOT_CONCLUSIVE",
      message: `probes found nothing, but the remote may still apply or show the effect until ${iso(T0 + 15_000)}; re-probing then`,
      trigger: "abort",
      recheckAtEpochMs: T0 + 15_000,
    },
  },
  // A resend that is due, held back.
  {
    case: "resend due, Retry-After on record → asks for the store's clock",
    evidence: absent(null),
    tool: keyed,
    record: { ...fresh, error: err("GATEWAY_5XX", "503", { retryNotBeforeEpochMs: T0 + 30_000 }) },
    expected: { kind: "read_store_clock" },
  },
  {
    case: "resend due, Retry-After still running → RETRY_AFTER until then, pass not counted",
    evidence: absent(null),
    tool: keyed,
    record: { ...fresh, error: err("GATEWAY_5XX", "503", { retryNotBeforeEpochMs: T0 + 30_000 }) },
    trigger: "sweeper",
    storeNowEpochMs: T0 + 29_999,
    expected: {
      kind: "stay_unknown",
      code: "RETRY_AFTER",
      message: `resend due (absent after 3 spaced probes), but the remote asked to wait until ${iso(T0 + 30_000)}`,
      trigger: "call",
      recheckAtEpochMs: T0 + 30_000,
    },
  },
  {
    case: "resend due, Retry-After passed → resend (a sweeper's resend counts as its pass)",
    evidence: absent(null),
    tool: keyed,
    record: { ...fresh, reconcileSweeps: 1, error: err("GATEWAY_5XX", "503", { retryNotBeforeEpochMs: T0 }) },
    trigger: "sweeper",
    storeNowEpochMs: T0,
    expected: { kind: "resend", why: "absent after 3 spaced probes", reconcileSweeps: 2 },
  },
  {
    case: "resend due by the sweeper, sweeps exhausted → a person decides, the record's reason kept",
    evidence: absent(null),
    tool: keyed,
    record: { ...fresh, reconcileSweeps: MAX_SWEEPS - 1, error: err("READ_TIMEOUT", "timed out") },
    trigger: "sweeper",
    expected: {
      kind: "to_human",
      code: "READ_TIMEOUT",
      message: `resend due (absent after 3 spaced probes), but ${MAX_SWEEPS} sweeps brought no outcome; a person decides`,
      trigger: "call",
      reconcileSweeps: MAX_SWEEPS,
    },
  },
  {
    case: "resend due by the sweeper, sweeps exhausted, no reason on record → AMBIGUOUS",
    evidence: { kind: "no_probe" },
    tool: keyedNoProbe,
    record: { ...fresh, reconcileSweeps: MAX_SWEEPS - 1 },
    trigger: "sweeper",
    expected: {
      kind: "to_human",
      code: "AMBIGUOUS",
      message: `resend due (keyed tool without probe; key still within retention), but ${MAX_SWEEPS} sweeps brought no outcome; a person decides`,
      trigger: "call",
      reconcileSweeps: MAX_SWEEPS,
    },
  },
  // No evidence either way (5d).
  {
    case: "a probe failed → stays UNKNOWN with its message, the sweeper's pass counts",
    evidence: noEvidence(failed),
    tool: keyed,
    trigger: "sweeper",
    expected: { kind: "stay_unknown", code: "PROBE_FAILED", message: "probe timed out", trigger: "sweeper" },
  },
  {
    case: "no failure, no proof (a refusal that proves nothing) → PROBE_FAILED 'no evidence either way'",
    evidence: noEvidence(null),
    tool: keyed,
    expected: { kind: "stay_unknown", code: "PROBE_FAILED", message: "no evidence either way", trigger: "call" },
  },
  {
    case: "a starved sweeper pass (no round run for lack of budget) does not count towards the human queue",
    evidence: noEvidence(noBudget, true),
    tool: keyed,
    trigger: "sweeper",
    expected: { kind: "stay_unknown", ...noBudget, trigger: "call" },
  },
  {
    case: "budget ran out after some rounds of this pass → the sweeper's pass counts",
    evidence: noEvidence(noBudget, false),
    tool: keyed,
    trigger: "sweeper",
    expected: { kind: "stay_unknown", ...noBudget, trigger: "sweeper" },
  },
  {
    case: "key expired, only a key probe → KEY_RETENTION_EXPIRED: its 'absent' proves nothing (5c)",
    evidence: noEvidence(null),
    tool: keyed,
    keyValid: false,
    expected: {
      kind: "to_human",
      code: "KEY_RETENTION_EXPIRED",
      message: "key retention expired; only an identity probe could prove absence",
      trigger: "call",
    },
  },
  {
    case: "key expired, but an identity probe → no evidence stays UNKNOWN",
    evidence: noEvidence(failed),
    tool: { ...keyed, probeByIdentity: probe },
    keyValid: false,
    expected: { kind: "stay_unknown", code: "PROBE_FAILED", message: "probe timed out", trigger: "call" },
  },
];

describe("decideReconcile: DESIGN.md rule 5, case by case", () => {
  it.each(rows)("$case", (row) => {
    const decision = decideReconcile({
      evidence: row.evidence,
      record: row.record ?? fresh,
      tool: row.tool,
      trigger: row.trigger ?? "call",
      keyValid: row.keyValid ?? true,
      maxReconcileSweeps: MAX_SWEEPS,
      ...(row.storeNowEpochMs === undefined ? {} : { storeNowEpochMs: row.storeNowEpochMs }),
    });
    expect(decision).toEqual(row.expected);
  });
});

describe("absenceMustBeProof (rule 5b)", () => {
  it.each([
    { tool: keyed, keyValid: true, expected: false }, // the remote dedupes the resend
    { tool: keyedWithWindow, keyValid: true, expected: false },
    { tool: keyedWithWindow, keyValid: false, expected: true }, // the key no longer protects
    { tool: keyed, keyValid: false, expected: false }, // no window: absence never proves anything
    { tool: unsafeWithWindow, keyValid: true, expected: true },
    { tool: unsafeWindowNoResend, keyValid: true, expected: false }, // never resent on absence
  ])(
    "$tool.kind, settleMs $tool.settleMs, resendWhenAbsent $tool.resendWhenAbsent, key valid $keyValid → $expected",
    ({ tool, keyValid, expected }) => {
      expect(absenceMustBeProof(tool, keyValid)).toBe(expected);
    },
  );
});
