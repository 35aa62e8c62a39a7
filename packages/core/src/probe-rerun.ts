import { parseStoredArgs } from "./call-input.ts";
import { classifyError } from "./classify/index.ts";
import { contradicts, type LateEvidence, reopenForPerson } from "./contradicting-evidence.ts";
import { type IntentRecord, wireKey } from "./intent-store.ts";
import { type JsonValue, toJson } from "./json.ts";
import { storeClockNow } from "./lease.ts";
import { OperatorActionError } from "./operator/errors.ts";
import { isFoundStateUnknown, isRefusedUnderKey } from "./probe-answer.ts";
import { judgeIdentityMatch } from "./probing.ts";
import { redactArgs } from "./redact.ts";
import type { Runtime } from "./runtime.ts";
import { timeoutSignal } from "./timeout-signal.ts";
import type { AnyTool } from "./tool.ts";
import { inSpan } from "./tracing.ts";

/** One probe's answer in {@link ProbeRerunReport}. */
export interface ProbeAnswer {
  /** `key`: by idempotency key / client reference; `identity`: by business identity since the intent. */
  probe: "key" | "identity";
  /**
   * `unclear`: the probe found the request's item, but its state does not show whether the effect
   * happened (rule 5a: no proof of success; `message` says why).
   */
  answer: "found" | "unclear" | "absent" | "failed";
  /** What the probe found (when `found` or `unclear`). */
  found?: JsonValue;
  /**
   * Why it failed (when `failed`), why the item's state tells nothing (when `unclear`), or the
   * remote's refusal read back under the key (an `absent` key probe).
   */
  message?: string;
  /**
   * Whether an `absent` from this probe is evidence of absence: false for the key probe once the key
   * retention has passed (rule 5c).
   */
  absenceCounts: boolean;
  /** ms. */
  durationMs: number;
}

/**
 * What {@link rerunProbes} saw. The record is not changed, unless what the probes found contradicts
 * its settled state (rule 16): then it is reopened for a person (`reopened`).
 */
export interface ProbeRerunReport {
  key: string;
  tool: string;
  /** The record as it was when the probes ran (unchanged by them). */
  status: IntentRecord["status"];
  version: number;
  keyExpired: boolean;
  /** One answer per probe the tool declares (key probe first); empty when it has none. */
  probes: ProbeAnswer[];
  /** A one-line summary for the operator. */
  summary: string;
  /**
   * True when a probe's answer contradicted the record's settled state (an effect found under the key
   * of a record settled as not having happened, say) and the record was reopened for a person with
   * both pieces of evidence (`CONTRADICTING_EVIDENCE`, rule 16).
   */
  reopened: boolean;
}

/**
 * Runs the record's tool probes now, once each (key and identity probe, concurrently), and reports
 * their answers. Looking settles nothing: a found effect of an UNKNOWN record is settled by an
 * operator with `confirm_effect` (audited, with a note) or by the executor's own reconciliation.
 * The one write: evidence that contradicts a settled record (an effect found under its key, or by
 * identity and attributed to no other record, while it says nothing happened; a refusal read back
 * under the key of an effect a probe or a person confirmed) reopens it for a person (rule 16,
 * {@link reopenForPerson}); a record with no such contradiction, and its timeline, are unchanged.
 * @param timeoutMs - per probe, ms; default the executor's probe timeout.
 * @throws OperatorActionError `NOT_FOUND` (no record), `NOT_ALLOWED` (its tool is not in the catalog).
 */
export async function rerunProbes(rt: Runtime, key: string, timeoutMs?: number): Promise<ProbeRerunReport> {
  const record = await rt.store.get(key);
  if (!record) throw new OperatorActionError("NOT_FOUND", `no intent record with key ${key}`, { field: "key" });
  const tool = rt.tools.get(record.tool);
  if (!tool) {
    throw new OperatorActionError("NOT_ALLOWED", `tool "${record.tool}" is not in the catalog: no probe to run`, {
      field: "key",
    });
  }
  // Key retention by the store's clock, which wrote `createdAt` (rule 9; issue 21 §6).
  const keyExpired = (await storeClockNow(rt)) - record.createdAtEpochMs > tool.keyRetentionMs;
  const limit = timeoutMs ?? rt.probe.timeoutMs;
  const probes: ["key" | "identity", NonNullable<AnyTool["probe"]>][] = [];
  if (tool.probe) probes.push(["key", tool.probe]);
  if (tool.probeByIdentity) probes.push(["identity", tool.probeByIdentity]);
  const answers = await Promise.all(
    probes.map(([kind, probe]) =>
      inSpan(
        rt,
        `probe ${tool.name}`,
        { "tristate.idempotency_key": key, "tristate.probe": kind, "tristate.trigger": "operator" },
        async (set): Promise<ProbeAnswer> => {
          const started = rt.clock.monotonicMs();
          const absenceCounts = kind === "identity" || !keyExpired;
          const { signal, dispose } = timeoutSignal(limit);
          try {
            const found = await probe(parseStoredArgs(tool, record.args), {
              clientRef: wireKey(record),
              signal,
              timeoutMs: limit,
              sinceEpochMs: record.createdAtEpochMs,
            });
            const durationMs = rt.clock.monotonicMs() - started;
            if (isRefusedUnderKey(found)) {
              // The remote processed this key's request and refused it: no effect (an identity probe's
              // "refusal" proves nothing, so it is plain absent).
              set({ "tristate.probe.answer": "absent" });
              return {
                probe: kind,
                answer: "absent",
                ...(kind === "key" ? { message: `refused: ${redactArgs(tool, record.args, found.detail)}` } : {}),
                absenceCounts,
                durationMs,
              };
            }
            if (found === null || found === undefined) {
              set({ "tristate.probe.answer": "absent" });
              return { probe: kind, answer: "absent", absenceCounts, durationMs };
            }
            if (isFoundStateUnknown(found)) {
              set({ "tristate.probe.answer": "unclear" });
              const message = redactArgs(tool, record.args, found.why);
              return { probe: kind, answer: "unclear", found: jsonOf(found.item), message, absenceCounts, durationMs };
            }
            set({ "tristate.probe.answer": "found" });
            return { probe: kind, answer: "found", found: jsonOf(found), absenceCounts, durationMs };
          } catch (error) {
            set({ "tristate.probe.answer": "failed" });
            return {
              probe: kind,
              answer: "failed",
              message: redactArgs(tool, record.args, classifyError(error).message),
              absenceCounts,
              durationMs: rt.clock.monotonicMs() - started,
            };
          } finally {
            dispose();
          }
        },
      ),
    ),
  );
  let summary = summaryOf(tool, answers);
  const reopened = await reopenIfContradicted(rt, record, tool, answers);
  if (reopened) summary = `${summary}; this contradicts the record's settled state, so it was reopened for a person`;
  return {
    key,
    tool: tool.name,
    status: record.status,
    version: record.version,
    keyExpired,
    probes: answers,
    summary,
    reopened,
  };
}

/** A found item as JSON (its text when it is not JSON). */
function jsonOf(value: unknown): JsonValue {
  try {
    return toJson(value) ?? null;
  } catch {
    return String(value);
  }
}

/** The operator's one-line summary of the answers (rule 5a: an item found is not always the effect). */
function summaryOf(tool: AnyTool, answers: ProbeAnswer[]): string {
  if (answers.length === 0) return `tool "${tool.name}" has no probe: only a person can tell whether it happened`;
  if (answers.some((a) => a.answer === "found")) return "a probe found the effect: confirm_effect settles it";
  if (answers.some((a) => a.answer === "unclear")) {
    return "a probe found the request's item, but its state does not show whether the effect happened: check it at the remote, then confirm_effect or confirm_no_effect";
  }
  if (answers.some((a) => a.probe === "key" && a.absenceCounts && a.message?.startsWith("refused"))) {
    return "the remote's record of this request shows it was refused (no effect): confirm_no_effect settles it";
  }
  if (answers.every((a) => a.answer === "absent" && a.absenceCounts)) return "every probe says absent";
  if (answers.some((a) => a.answer === "failed")) return "a probe failed: no evidence either way";
  return "absent, but the key has expired, so the key probe's answer proves nothing";
}

/**
 * Rule 16 for probes: the evidence the answers give about the record's current attempt — an effect
 * found under its key, or by identity when it is this record's by rule 5g (`judgeIdentityMatch`); a
 * refusal read back under its key — and, when it contradicts the settled record, the
 * reopening write (compare-and-set on the version the probes ran against: a record changed meanwhile
 * is left to whoever changed it). @returns true when the record was reopened.
 */
async function reopenIfContradicted(
  rt: Runtime,
  record: IntentRecord,
  tool: AnyTool,
  answers: ProbeAnswer[],
): Promise<boolean> {
  if (record.status !== "SUCCEEDED" && record.status !== "FAILED_NO_EFFECT") return false;
  const base = { source: "probe" as const, attempt: record.attempt, wireKey: wireKey(record) };
  let evidence: LateEvidence | null = null;
  const keyAbsent = answers.some((a) => a.probe === "key" && a.answer === "absent" && a.absenceCounts);
  for (const a of answers) {
    const ours = async () =>
      a.probe === "key" || (await judgeIdentityMatch(rt, tool, record, a.found, keyAbsent)).kind === "ours";
    if (a.answer === "found" && (await ours())) {
      evidence = { ...base, outcome: "SUCCEEDED", ...(a.found !== undefined ? { detail: a.found } : {}) };
      break;
    }
    if (a.probe === "key" && a.answer === "absent" && a.absenceCounts && a.message?.startsWith("refused")) {
      evidence = { ...base, outcome: "FAILED_NO_EFFECT", detail: a.message };
    }
  }
  if (!evidence || !contradicts(record, tool, evidence)) return false;
  const { patch, events } = reopenForPerson(rt, record, evidence);
  return (await rt.store.update(record.key, record.version, patch, events, rt.clock.nowEpochMs())) !== null;
}
