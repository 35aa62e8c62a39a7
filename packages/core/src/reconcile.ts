import { classifyError } from "./classify.ts";
import type { Deadline } from "./deadline.ts";
import type { Envelope } from "./envelope.ts";
import { isDeadlineExceededError } from "./errors.ts";
import type { IntentError, IntentEvent, IntentRecord } from "./intent-store.ts";
import { toJson } from "./json.ts";
import { envelopeFor, event, inSpan, type Runtime, timeoutSignal } from "./runtime.ts";
import { registeredCompensation } from "./saga.ts";
import { sendOnce } from "./send.ts";
import type { ReasonCode } from "./statuses.ts";
import type { AnyTool } from "./tool.ts";

/** Who is reconciling: a caller's repeat call, the call that just saw UNKNOWN, or the sweeper. */
export type ReconcileTrigger = "call" | "after_unknown" | "sweeper";

type ProbeKind = "key" | "identity";

/**
 * Reconciles an UNKNOWN record (DESIGN.md rule 5; source design's `reconcile`): evidence first,
 * spaced probes; found in any state → SUCCEEDED (`found`); absent → resend once with the same key
 * and the persisted original arguments when that is safe; no evidence possible → `needs_human`;
 * a failing probe is no evidence (stays UNKNOWN for the sweeper). Never resends blindly.
 */
export async function reconcile(
  rt: Runtime,
  tool: AnyTool,
  record: IntentRecord,
  deadline: Deadline,
  trigger: ReconcileTrigger,
): Promise<Envelope> {
  return inSpan(
    rt,
    `reconcile ${tool.name}`,
    { "tristate.idempotency_key": record.key, "tristate.trigger": trigger },
    async () => {
      const now = rt.clock.nowEpochMs();
      const keyValid = now - record.createdAtEpochMs <= tool.keyRetentionMs;
      const probes: [ProbeKind, NonNullable<AnyTool["probe"]>][] = [];
      if (tool.probe) probes.push(["key", tool.probe]);
      if (tool.probeByIdentity) probes.push(["identity", tool.probeByIdentity]);
      // After key retention, a key probe's "not found" proves nothing (rule 5c); its "found" still does.
      const counting = probes.filter(([kind]) => kind === "identity" || keyValid);

      if (probes.length === 0) {
        if (tool.kind === "idempotent_by_key" && keyValid)
          return resend(rt, tool, record, deadline, "keyed tool without probe; key still within retention");
        // An unsafe remote never deduplicated on the key, so its age is no reason (field case T30).
        const unsafe = tool.kind === "unsafe";
        return toHuman(
          rt,
          record,
          unsafe || keyValid ? "NO_PROBE" : "KEY_RETENTION_EXPIRED",
          [],
          unsafe ? "unsafe tool without a probe" : "key retention expired and no probe",
          { tool, trigger },
        );
      }

      const events: IntentEvent[] = [];
      let allAbsent = counting.length > 0;
      let rounds = 0;
      let lastFailure: { code: ReasonCode; message: string } | null = null;
      for (let i = 0; i < rt.probe.attempts; i++) {
        if (i > 0) await rt.clock.sleep(Math.min(i * rt.probe.spacingMs, deadline.remainingMs() / 4));
        let timeoutMs: number;
        try {
          timeoutMs = deadline.timeoutFor(rt.probe.timeoutMs, rt.reserveMs, rt.minCallBudgetMs);
        } catch (error) {
          if (!isDeadlineExceededError(error)) throw error;
          lastFailure = { code: "DEADLINE_EXCEEDED", message: "no budget left to probe; the sweeper will go on" };
          allAbsent = false;
          break;
        }
        rounds++;
        for (const [kind, probe] of probes) {
          const answer = await runProbe(rt, tool, record, kind, probe, timeoutMs, i + 1);
          events.push(answer.event);
          if (answer.kind === "found") {
            return settleFound(rt, record, tool, answer.found, events);
          }
          if (answer.kind === "failed") {
            lastFailure = { code: "PROBE_FAILED", message: answer.message };
            if (counting.some(([k]) => k === kind)) allAbsent = false;
          }
        }
      }

      if (allAbsent && rounds === rt.probe.attempts) {
        if (tool.resendWhenAbsent) {
          return resend(rt, tool, record, deadline, `absent after ${rounds} spaced probes`, events);
        }
        return toHuman(
          rt,
          record,
          "PROBES_ABSENT_NO_DEDUPE",
          events,
          "probes found nothing, but the remote cannot deduplicate a resend and the original may still land",
          { tool, trigger },
        );
      }
      if (counting.length === 0) {
        return toHuman(
          rt,
          record,
          "KEY_RETENTION_EXPIRED",
          events,
          "key retention expired; only an identity probe could prove absence",
          { tool, trigger },
        );
      }
      return stayUnknown(
        rt,
        record,
        events,
        lastFailure ?? { code: "PROBE_FAILED", message: "no evidence either way" },
        trigger,
        tool,
      );
    },
  );
}

async function runProbe(
  rt: Runtime,
  tool: AnyTool,
  record: IntentRecord,
  kind: ProbeKind,
  probe: NonNullable<AnyTool["probe"]>,
  timeoutMs: number,
  round: number,
): Promise<
  | { kind: "found"; found: unknown; event: IntentEvent }
  | { kind: "absent"; event: IntentEvent }
  | { kind: "failed"; message: string; event: IntentEvent }
> {
  return inSpan(
    rt,
    `probe ${tool.name}`,
    { "tristate.idempotency_key": record.key, "tristate.probe": kind, "tristate.probe.round": round },
    async (set) => {
      const { signal, dispose } = timeoutSignal(timeoutMs);
      try {
        const found = await probe(record.args, {
          clientRef: record.key,
          signal,
          timeoutMs,
          sinceEpochMs: record.createdAtEpochMs,
        });
        const answer = found === null || found === undefined ? "absent" : "found";
        set({ "tristate.probe.answer": answer });
        const ev = event(rt, record.key, "probe", { probe: kind, round, answer });
        if (answer === "found") {
          return { kind: "found", found, event: ev };
        }
        return { kind: "absent", event: ev };
      } catch (error) {
        const message = classifyError(error).message;
        set({ "tristate.probe.answer": "failed" });
        return {
          kind: "failed",
          message,
          event: event(rt, record.key, "probe", { probe: kind, round, answer: "failed", error: message }),
        };
      } finally {
        dispose();
      }
    },
  );
}

async function settleFound(
  rt: Runtime,
  record: IntentRecord,
  tool: AnyTool | undefined,
  found: unknown,
  events: IntentEvent[],
): Promise<Envelope> {
  const now = rt.clock.nowEpochMs();
  let result: ReturnType<typeof toJson>;
  try {
    result = toJson(found);
  } catch {
    result = { found: String(found) };
  }
  const updated = await rt.store.update(
    record.key,
    record.version,
    {
      status: "SUCCEEDED",
      result,
      resolution: "found",
      needsHuman: false,
      error: null,
      finishedAtEpochMs: now,
      ...(record.compensation && tool ? { compensation: registeredCompensation(tool, record.args, result) } : {}),
    },
    [...events, event(rt, record.key, "outcome", { outcome: "SUCCEEDED", resolution: "found" })],
    now,
  );
  return afterWrite(rt, record.key, updated, events);
}

async function resend(
  rt: Runtime,
  tool: AnyTool,
  record: IntentRecord,
  deadline: Deadline,
  why: string,
  events: IntentEvent[] = [],
): Promise<Envelope> {
  let timeoutMs: number;
  try {
    timeoutMs = deadline.timeoutFor(tool.timeoutMs, rt.reserveMs, rt.minCallBudgetMs);
  } catch (error) {
    if (!isDeadlineExceededError(error)) throw error;
    return stayUnknown(
      rt,
      record,
      events,
      { code: "DEADLINE_EXCEEDED", message: `resend due (${why}) but no budget left; the sweeper will go on` },
      "call",
      tool,
    );
  }
  const now = rt.clock.nowEpochMs();
  // Take the record (compare-and-set): only one reconciler may resend.
  const owned = await rt.store.update(
    record.key,
    record.version,
    { status: "PENDING", attempt: record.attempt + 1, deadlineEpochMs: deadline.epochMs, error: null },
    [...events, event(rt, record.key, "resend", { reason: why, attempt: record.attempt + 1 })],
    now,
  );
  if (!owned) return afterWrite(rt, record.key, null, []);
  const sent = await sendOnce(rt, tool, owned, deadline, timeoutMs, {
    resolutionOnSuccess: "absent_resent",
    spanName: `resend ${tool.name}`,
  });
  switch (sent.kind) {
    case "settled":
      return sent.envelope;
    case "unknown":
      return envelopeFor(
        rt,
        sent.record,
        false,
        "resent once with the same key; the outcome is unknown again; reconciliation scheduled",
      );
    case "lost":
      return afterWrite(rt, record.key, null, []);
  }
}

/** A record without any probe is never re-checked automatically: its recheck time is this far ahead (100 years). */
const NO_RECHECK_MS = 100 * 365 * 24 * 3600_000;

/**
 * Puts a record in the human queue. While it waits, a tool with a probe is re-probed by the sweeper
 * (an effect may still land: field case T06), with a doubling delay (`humanRecheckMs` × 2^sweeps, at
 * most 2^8): its deadline becomes that recheck time. A tool without a probe is never re-checked.
 */
async function toHuman(
  rt: Runtime,
  record: IntentRecord,
  code: ReasonCode,
  events: IntentEvent[],
  why: string,
  recheck: { tool: AnyTool; trigger: ReconcileTrigger },
): Promise<Envelope> {
  const now = rt.clock.nowEpochMs();
  const error: IntentError = { code, message: why };
  const sweeps = record.reconcileSweeps + (recheck.trigger === "sweeper" ? 1 : 0);
  const hasProbe = Boolean(recheck.tool.probe || recheck.tool.probeByIdentity);
  const deadlineEpochMs = hasProbe ? now + rt.humanRecheckMs * 2 ** Math.min(sweeps, 8) : now + NO_RECHECK_MS;
  const again = record.needsHuman && record.error?.code === code; // a re-check that learnt nothing new
  const updated = await rt.store.update(
    record.key,
    record.version,
    { status: "UNKNOWN", needsHuman: true, resolution: "needs_human", error, reconcileSweeps: sweeps, deadlineEpochMs },
    again ? events : [...events, event(rt, record.key, "needs_human", { code, reason: why })],
    now,
  );
  return afterWrite(rt, record.key, updated, events);
}

async function stayUnknown(
  rt: Runtime,
  record: IntentRecord,
  events: IntentEvent[],
  failure: { code: ReasonCode; message: string },
  trigger: ReconcileTrigger,
  tool: AnyTool,
): Promise<Envelope> {
  const now = rt.clock.nowEpochMs();
  const sweeps = record.reconcileSweeps + (trigger === "sweeper" ? 1 : 0);
  if (trigger === "sweeper" && sweeps >= rt.maxReconcileSweeps) {
    return toHuman(
      rt,
      { ...record, reconcileSweeps: sweeps },
      failure.code,
      events,
      `${failure.message}; no evidence after ${sweeps} sweeps`,
      { tool, trigger: "call" }, // this sweep is already counted in `sweeps`
    );
  }
  const updated = await rt.store.update(
    record.key,
    record.version,
    { reconcileSweeps: sweeps, ...(record.error ? {} : { error: { code: failure.code, message: failure.message } }) },
    events,
    now,
  );
  return afterWrite(rt, record.key, updated, events);
}

/** After a compare-and-set: the written record's envelope, or the winner's state when we lost. */
async function afterWrite(
  rt: Runtime,
  key: string,
  updated: IntentRecord | null,
  unsaved: IntentEvent[],
): Promise<Envelope> {
  if (updated) return envelopeFor(rt, updated, false);
  if (unsaved.length) await rt.store.appendEvents(unsaved);
  const current = await rt.store.get(key);
  if (!current) throw new Error(`intent record ${key} disappeared during reconciliation`);
  return envelopeFor(rt, current, true);
}
