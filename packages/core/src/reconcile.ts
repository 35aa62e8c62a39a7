import type { Deadline } from "./deadline.ts";
import type { Envelope } from "./envelope.ts";
import { isDeadlineExceededError } from "./errors.ts";
import { afterWrite, type ReconcileTrigger, stayUnknown, toHuman } from "./human-queue.ts";
import type { IntentEvent, IntentRecord } from "./intent-store.ts";
import { settlesAtForLease, settlesAtForSend, storeNow } from "./lease.ts";
import { probeProgress } from "./probe-progress.ts";
import { judgeIdentityMatch, type ProbeKind, runProbe } from "./probing.ts";
import { envelopeFor } from "./record-envelope.ts";
import { event } from "./record-events.ts";
import type { Runtime } from "./runtime.ts";
import { sendOnce } from "./send.ts";
import { sentOnceUnderWireKey, settleFound, settleRefused } from "./settle.ts";
import type { ReasonCode } from "./statuses.ts";
import type { AnyTool } from "./tool.ts";
import { inSpan } from "./tracing.ts";

export type { ReconcileTrigger } from "./human-queue.ts";

/**
 * Reconciles an UNKNOWN record (DESIGN.md rule 5; source design's `reconcile`): evidence first,
 * spaced probes; found in any state → SUCCEEDED (`found`), unless an identity match belongs to
 * another record (rule 5g); absent → resend once with the same key and the persisted arguments,
 * only when that is safe: the remote dedupes the key, or the probes ran after the tool's settle
 * window (rule 5b) — before it the record stays UNKNOWN and is due again when absence can be
 * conclusive; no evidence possible → `needs_human`; a failing probe is no evidence (stays UNKNOWN
 * for the sweeper). A `Retry-After` still running defers the resend. Never resends blindly.
 * @param freshAttempt - the caller knows no probe round of the current attempt is on record (the
 *   record has just left PENDING: its send's outcome, or a lease taken over), so the timeline is not
 *   read for them. Implied by the `after_unknown` trigger.
 */
export async function reconcile(
  rt: Runtime,
  tool: AnyTool,
  record: IntentRecord,
  deadline: Deadline,
  trigger: ReconcileTrigger,
  freshAttempt = false,
): Promise<Envelope> {
  return inSpan(
    rt,
    `reconcile ${tool.name}`,
    { "tristate.idempotency_key": record.key, "tristate.trigger": trigger },
    async () => {
      if (record.needsHuman && record.error?.code === "PARTIAL_EFFECT") {
        // Part of it took effect: a probe finding "the effect" proves nothing about the rest. A person decides.
        return envelopeFor(rt, record, true);
      }
      const now = rt.clock.nowEpochMs();
      const keyValid = now - record.createdAtEpochMs <= tool.keyRetentionMs;
      // A resend the remote deduplicates needs no proof of absence (the key is still remembered).
      const deduped = tool.kind === "idempotent_by_key" && keyValid;
      const probes: [ProbeKind, NonNullable<AnyTool["probe"]>][] = [];
      if (tool.probe) probes.push(["key", tool.probe]);
      if (tool.probeByIdentity) probes.push(["identity", tool.probeByIdentity]);
      // After key retention, a key probe's "not found" proves nothing (rule 5c); its "found" still does.
      const counting = probes.filter(([kind]) => kind === "identity" || keyValid);

      if (probes.length === 0) {
        // Waiting for a person: nothing can be learnt without a probe, and nothing is resent on its own.
        // Nor is a step of a run being aborted: an abort must not create the effect it would undo.
        if (record.needsHuman || trigger === "abort") return envelopeFor(rt, record, true);
        if (deduped) {
          return resend(
            rt,
            tool,
            record,
            deadline,
            "keyed tool without probe; key still within retention",
            [],
            trigger,
          );
        }
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

      // The settle window matters only where absence must be proof; read the store's clock only then.
      const needsProof = !deduped && tool.resendWhenAbsent && tool.settleMs !== undefined;
      // Rounds already run for this attempt (a pass interrupted by a crash, or an earlier pass) count:
      // a restarted executor goes on from there, but always runs at least one round now (issue 12).
      // Not where absence must be proof: there every deciding round runs after the settle window, by
      // the store's clock, and the rounds on record carry only a replica's clock.
      // Nor where the record has just left PENDING: rounds run while it is UNKNOWN, and a new attempt
      // starts PENDING, so none of this attempt's is on record (bar a stray one from a reconciler past
      // its lease); starting afresh can only add rounds.
      const progress =
        needsProof || freshAttempt || trigger === "after_unknown"
          ? { clean: 0, nextRound: 1, lastRoundAtEpochMs: null }
          : probeProgress(
              await rt.store.listEvents(record.key),
              counting.map(([kind]) => kind),
            );
      const skip = Math.min(progress.clean, rt.probe.attempts - 1);
      const events: IntentEvent[] = [];
      let allAbsent = counting.length > 0;
      let rounds = skip;
      let lastRoundAt = Number.NEGATIVE_INFINITY;
      let ambiguous: string | null = null;
      let lastFailure: { code: ReasonCode; message: string } | null = null;
      for (let i = skip; i < rt.probe.attempts; i++) {
        const round = progress.nextRound + (i - skip);
        if (i > 0) {
          // Spaced from the previous round, also when that round ran before a restart.
          const previousAt = i === skip ? progress.lastRoundAtEpochMs : null;
          const waitMs =
            previousAt === null ? i * rt.probe.spacingMs : previousAt + i * rt.probe.spacingMs - rt.clock.nowEpochMs();
          if (waitMs > 0) await rt.clock.sleep(Math.min(waitMs, deadline.remainingMs() / 4));
        }
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
        if (needsProof) lastRoundAt = await storeNow(rt);
        let keyAbsent = false;
        for (const [kind, probe] of probes) {
          const answer = await runProbe(rt, tool, record, kind, probe, timeoutMs, round);
          events.push(answer.event);
          if (answer.kind === "found") {
            if (kind === "key") return settleFound(rt, record, tool, answer.found, events);
            const verdict = await judgeIdentityMatch(rt, tool, record, answer.found, keyAbsent);
            if (verdict.kind === "ours") return settleFound(rt, record, tool, answer.found, events);
            events.push(event(rt, record.key, "probe", { probe: kind, round, match: verdict.kind, why: verdict.why }));
            // Another record's effect is no evidence of this one's absence either: an identity probe
            // answers with one match, which may hide this record's own. Only a valid key probe's
            // "absent" in the same round lets the match count as absent (rule 5g).
            if (verdict.kind === "ambiguous" || !keyAbsent) ambiguous = verdict.why;
            continue;
          }
          if (answer.kind === "refused") {
            // The remote's stored answer under this key is the original's only if nothing else was
            // ever sent under it (a same-key resend's refusal would be stored there too: rule 5f).
            if (sentOnceUnderWireKey(record)) return settleRefused(rt, record, tool, answer, events);
            if (counting.some(([k]) => k === kind)) allAbsent = false; // no evidence either way
            continue;
          }
          if (answer.kind === "absent" && kind === "key" && keyValid) keyAbsent = true;
          if (answer.kind === "failed") {
            lastFailure = { code: "PROBE_FAILED", message: answer.message };
            if (counting.some(([k]) => k === kind)) allAbsent = false;
          }
        }
        // The round is on record at once, so a crash after it does not cost it (probeProgress).
        if (i < rt.probe.attempts - 1) await rt.store.appendEvents(events.splice(0));
      }

      if (ambiguous !== null) {
        return toHuman(rt, record, "AMBIGUOUS_IDENTITY_MATCH", events, ambiguous, { tool, trigger });
      }
      if (record.needsHuman) {
        // Waiting for a person: only found evidence settles it; nothing is ever resent on its own.
        return toHuman(
          rt,
          record,
          record.error?.code ?? "NO_PROBE",
          events,
          record.error?.message ?? "waiting for an operator",
          { tool, trigger },
        );
      }
      if (allAbsent && rounds === rt.probe.attempts) {
        if (!tool.resendWhenAbsent) {
          return toHuman(
            rt,
            record,
            "PROBES_ABSENT_NO_DEDUPE",
            events,
            tool.settleMs === undefined
              ? "probes found nothing, but the tool declares no settle window (settleMs), so absence proves nothing: the original may still land, and the remote cannot deduplicate a resend"
              : "probes found nothing, but the tool does not allow a resend on absence (resendWhenAbsent: false)",
            { tool, trigger },
          );
        }
        if (!deduped) {
          const waitUntil = await settleWait(rt, tool, record, lastRoundAt);
          if (waitUntil === "never") {
            return toHuman(
              rt,
              record,
              "PROBES_ABSENT_NO_DEDUPE",
              events,
              "probes found nothing, but the tool declares no settle window, so absence proves nothing",
              { tool, trigger },
            );
          }
          if (waitUntil !== null) {
            return stayUnknown(
              rt,
              record,
              events,
              {
                code: "ABSENCE_NOT_CONCLUSIVE",
                message: `probes found nothing, but the remote may still apply or show the effect until ${new Date(waitUntil).toISOString()}; re-probing then`,
              },
              trigger,
              tool,
              waitUntil,
              record.settlesAtEpochMs === null ? { settlesAtEpochMs: waitUntil } : {},
            );
          }
        }
        if (trigger === "abort") {
          // Absent, but its run is being aborted: an abort must not create the effect it would undo.
          return stayUnknown(
            rt,
            record,
            events,
            {
              code: "RUN_ABORTED",
              message: `absent after ${rounds} spaced probes; its run is being aborted, so it is not resent`,
            },
            trigger,
            tool,
          );
        }
        return resend(rt, tool, record, deadline, `absent after ${rounds} spaced probes`, events, trigger);
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
      // A sweeper pass that could not run a single round for lack of budget gathered no evidence
      // either way: it does not count towards the human queue (or a short lease would send records
      // there unprobed).
      const starved = lastFailure?.code === "DEADLINE_EXCEEDED" && rounds === skip;
      return stayUnknown(
        rt,
        record,
        events,
        lastFailure ?? { code: "PROBE_FAILED", message: "no evidence either way" },
        starved && trigger === "sweeper" ? "call" : trigger,
        tool,
      );
    },
  );
}

/**
 * Whether absence is proof yet (rule 5b): null when the last probe round ran at or after the
 * record's settle time, else the time (store clock, epoch ms) from which it will be; "never" for a
 * tool without a settle window. A record with no settle time recorded (written before settle
 * windows existed) gets one counted from now and waits for it.
 */
async function settleWait(
  rt: Runtime,
  tool: AnyTool,
  record: IntentRecord,
  lastRoundAt: number,
): Promise<number | null | "never"> {
  if (tool.settleMs === undefined) return "never";
  const settlesAt = record.settlesAtEpochMs ?? (settlesAtForLease(tool, await storeNow(rt)) as number);
  return lastRoundAt >= settlesAt ? null : settlesAt;
}

async function resend(
  rt: Runtime,
  tool: AnyTool,
  record: IntentRecord,
  deadline: Deadline,
  why: string,
  events: IntentEvent[],
  trigger: ReconcileTrigger,
): Promise<Envelope> {
  const now = rt.clock.nowEpochMs();
  // The sweeper's resends count as its passes: a remote that never answers sends the record to a
  // person after `maxReconcileSweeps`, instead of being resent forever.
  const sweeps = record.reconcileSweeps + (trigger === "sweeper" ? 1 : 0);
  if (trigger === "sweeper" && sweeps >= rt.maxReconcileSweeps) {
    return toHuman(
      rt,
      { ...record, reconcileSweeps: sweeps },
      record.error?.code ?? "AMBIGUOUS",
      events,
      `resend due (${why}), but ${sweeps} sweeps brought no outcome; a person decides`,
      { tool, trigger: "call" },
    );
  }
  const notBefore = record.error?.retryNotBeforeEpochMs;
  if (notBefore !== undefined && notBefore > (await storeNow(rt))) {
    // The remote asked for time (Retry-After): no resend before it (issue 9 §7).
    return stayUnknown(
      rt,
      record,
      events,
      {
        code: "RETRY_AFTER",
        message: `resend due (${why}), but the remote asked to wait until ${new Date(notBefore).toISOString()}`,
      },
      "call",
      tool,
      notBefore,
    );
  }
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
  // Take the record (compare-and-set): only one reconciler may resend.
  const owned = await rt.store.update(
    record.key,
    record.version,
    {
      status: "PENDING",
      attempt: record.attempt + 1,
      deadlineEpochMs: deadline.epochMs,
      error: null,
      reconcileSweeps: sweeps,
      settlesAtEpochMs: await settlesAtForSend(rt, tool, deadline),
    },
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
        sent.record.needsHuman
          ? "resent once with the same key; the resend was refused, which proves nothing about the original; an operator has been asked to confirm"
          : "resent once with the same key; the outcome is unknown again; reconciliation scheduled",
      );
    case "lost":
      return afterWrite(rt, record.key, null, []);
  }
}
