/**
 * One probe of a record, and whose effect an identity probe's match is (DESIGN.md rules 5a and 5g).
 */
import { parseStoredArgs } from "./call-input.ts";
import { classifyError } from "./classify/index.ts";
import { type IntentEvent, type IntentRecord, wireKey } from "./intent-store.ts";
import { type JsonValue, toJson } from "./json.ts";
import { isFoundStateUnknown, isRefusedUnderKey } from "./probe-answer.ts";
import { event } from "./record-events.ts";
import { redactArgs } from "./redact.ts";
import type { Runtime } from "./runtime.ts";
import { timeoutSignal } from "./timeout-signal.ts";
import type { AnyTool, EffectRef } from "./tool.ts";
import { inSpan } from "./tracing.ts";

/** The key probe (by idempotency key / client reference) or the identity probe (by business identity). */
export type ProbeKind = "key" | "identity";

/** What one probe said. `message` of a failure is redacted (no non-loggable argument values). */
export type ProbeResult =
  | { kind: "found"; found: unknown; event: IntentEvent }
  /** The request's item was found, but its state does not tell whether the effect happened (rule 5a). */
  | { kind: "unclear"; found: unknown; why: string; event: IntentEvent }
  /** A key probe read back the remote's refusal of this key's request: proof of no effect. */
  | { kind: "refused"; detail: string; httpStatus?: number; event: IntentEvent }
  | { kind: "absent"; event: IntentEvent }
  | { kind: "failed"; message: string; event: IntentEvent };

/**
 * Runs one probe with the record's persisted arguments, parsed by the tool's schema, and the key the
 * current attempt sent as its client reference. Never throws: a throwing probe is `failed` (no
 * evidence either way). Its timeline event carries the probe's `durationMs` (start → answer, the
 * executor's clock).
 */
export async function runProbe(
  rt: Runtime,
  tool: AnyTool,
  record: IntentRecord,
  kind: ProbeKind,
  probe: NonNullable<AnyTool["probe"]>,
  timeoutMs: number,
  round: number,
): Promise<ProbeResult> {
  return inSpan(
    rt,
    `probe ${tool.name}`,
    { "tristate.idempotency_key": record.key, "tristate.probe": kind, "tristate.probe.round": round },
    async (set) => {
      const { signal, dispose } = timeoutSignal(timeoutMs);
      // The probe's own time (start → answer, ms), on its event: the timeline shows it (issue 22 §4).
      const startedAt = rt.clock.nowEpochMs();
      const took = () => Math.max(0, rt.clock.nowEpochMs() - startedAt);
      try {
        const args = parseStoredArgs(tool, record.args);
        const found = await probe(args, {
          clientRef: wireKey(record),
          signal,
          timeoutMs,
          sinceEpochMs: record.createdAtEpochMs,
        });
        if (isRefusedUnderKey(found) && kind === "key") {
          set({ "tristate.probe.answer": "refused" });
          const detail = redactArgs(tool, record.args, found.detail);
          const evidence: { evidence?: JsonValue } =
            found.evidence === undefined ? {} : { evidence: jsonOf(found.evidence) };
          return {
            kind: "refused",
            detail,
            ...(found.httpStatus !== undefined ? { httpStatus: found.httpStatus } : {}),
            event: event(rt, record.key, "probe", {
              probe: kind,
              round,
              answer: "refused",
              detail,
              ...evidence,
              durationMs: took(),
            }),
          };
        }
        if (isFoundStateUnknown(found)) {
          set({ "tristate.probe.answer": "unclear" });
          const why = redactArgs(tool, record.args, found.why);
          const data = { probe: kind, round, answer: "unclear", why, evidence: jsonOf(found.item), durationMs: took() };
          return { kind: "unclear", found: found.item, why, event: event(rt, record.key, "probe", data) };
        }
        const answer = found === null || found === undefined || isRefusedUnderKey(found) ? "absent" : "found";
        set({ "tristate.probe.answer": answer });
        const ev = event(rt, record.key, "probe", { probe: kind, round, answer, durationMs: took() });
        if (answer === "found") return { kind: "found", found, event: ev };
        return { kind: "absent", event: ev };
      } catch (error) {
        const message = redactArgs(tool, record.args, classifyError(error).message);
        set({ "tristate.probe.answer": "failed" });
        return {
          kind: "failed",
          message,
          event: event(rt, record.key, "probe", {
            probe: kind,
            round,
            answer: "failed",
            error: message,
            durationMs: took(),
          }),
        };
      } finally {
        dispose();
      }
    },
  );
}

/** A found item as JSON for the timeline (its text when it is not JSON). */
function jsonOf(value: unknown): JsonValue {
  try {
    return toJson(value) ?? null;
  } catch {
    return String(value);
  }
}

/** Whose effect an identity probe's match is. */
export type MatchVerdict =
  /** This record's: settle it as found. */
  | { kind: "ours" }
  /**
   * Another record's (it carries another key, or another record holds its remote id): not evidence
   * for this one. `owners`: the records known to hold it (none when only its key tells).
   */
  | { kind: "other"; why: string; owners: MatchOwner[] }
  /** It could be this record's or another's (`owners`, which may own it): a person decides. */
  | { kind: "ambiguous"; why: string; owners: MatchOwner[] };

/**
 * A record an identity match may belong to, as the probe's timeline event names it (`owners`), so a
 * reader can go to its run (the dashboard links it).
 */
type MatchOwner = { key: string; runId: string; stepId: string };

const ownerOf = (r: IntentRecord): MatchOwner => ({ key: r.key, runId: r.runId, stepId: r.stepId });
/** "s2 (run r-1)": a record's step and run, as a reason names them. */
const stepInRun = (r: IntentRecord): string => `${r.stepId} (run ${r.runId})`;

function refOf(tool: AnyTool, found: unknown): EffectRef | null {
  if (!tool.effectRef) return null;
  try {
    return tool.effectRef(found) ?? null;
  } catch {
    return null;
  }
}

/**
 * Judges an identity probe's match (rule 5g): an effect already attributed to another intent record
 * (the same client reference / key / remote id) cannot settle a second record. A match carrying
 * another key is another record's. Otherwise, when other records of the tool with the same identity
 * could own it: a valid key probe's "absent" outranks the match (`keyProbeAbsent`), a remote id that
 * none of them holds is ours, anything else is ambiguous.
 * @param keyProbeAbsent - true when a key probe within key retention said "absent" in this pass.
 * @throws whatever the store throws.
 */
export async function judgeIdentityMatch(
  rt: Runtime,
  tool: AnyTool,
  record: IntentRecord,
  found: unknown,
  keyProbeAbsent: boolean,
): Promise<MatchVerdict> {
  const ref = refOf(tool, found);
  if (ref?.key) {
    return ref.key === wireKey(record) || ref.key === record.key
      ? { kind: "ours" }
      : { kind: "other", why: "the effect found by identity carries another idempotency key", owners: [] };
  }
  // Effects another record may own: same tool and identity, not known to have failed, recent enough
  // that its effect could have been made after this record's intent.
  const since = record.createdAtEpochMs - Math.max(tool.keyRetentionMs, 3_600_000);
  const siblings = (await rt.store.listByIdentity(tool.name, record.identity, since, record.key)).filter(
    (s) => s.status !== "FAILED_NO_EFFECT",
  );
  if (siblings.length === 0) return { kind: "ours" };
  if (ref?.remoteId) {
    const holders = siblings.filter(
      (s) => s.status === "SUCCEEDED" && refOf(tool, s.result)?.remoteId === ref.remoteId,
    );
    if (holders.length > 0) {
      return {
        kind: "other",
        why: `the effect found by identity is already held by step ${stepInRun(holders[0]!)}`,
        owners: holders.map(ownerOf),
      };
    }
    const unsure = siblings.filter((s) => s.status !== "SUCCEEDED" || !refOf(tool, s.result)?.remoteId);
    if (unsure.length === 0) return { kind: "ours" };
  }
  if (keyProbeAbsent) {
    return {
      kind: "other",
      why: "the key probe found nothing for this record's key; the match is another step's",
      owners: siblings.map(ownerOf),
    };
  }
  const steps = siblings.map(stepInRun).join(", ");
  return {
    kind: "ambiguous",
    why: `an effect matching this identity was found, but step(s) ${steps} of the same tool and identity may own it`,
    owners: siblings.map(ownerOf),
  };
}
