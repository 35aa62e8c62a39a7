import type { StoredIntentEvent } from "./intent-store.ts";
import type { ProbeKind } from "./probing.ts";

/** Event types that start (or restate) the current attempt's send: probe rounds before them are older evidence. */
const ATTEMPT_BOUNDARIES = new Set(["created", "sent", "resend", "outcome", "late_answer"]);

/** What the timeline says about the probe rounds already run for the current attempt. */
export interface ProbeProgress {
  /** Trailing consecutive rounds in which every counting probe answered "absent" (and nothing else). */
  clean: number;
  /** The number to give the next round (rounds are numbered across passes and restarts). */
  nextRound: number;
  /** When the last recorded round ran (executor clock, epoch ms), or null when none. */
  lastRoundAtEpochMs: number | null;
}

/**
 * Reads the probe rounds already recorded for the record's current attempt (issue 12: a reconciliation
 * interrupted by a crash continues where it stopped instead of starting over). Each round's probe
 * events are written as soon as the round ends, so rounds survive a restart. A round counts as clean
 * when every probe kind in `counting` answered "absent" in it, with no failure, refusal, found or
 * foreign match; only the trailing run of clean rounds counts. Rounds before the attempt's last send
 * (or its outcome, or an operator's resend) are ignored.
 * @param events the record's timeline, oldest first.
 * @param counting the probe kinds whose "absent" counts (identity, and key while the key is retained).
 */
export function probeProgress(events: readonly StoredIntentEvent[], counting: readonly ProbeKind[]): ProbeProgress {
  let start = 0;
  events.forEach((e, i) => {
    // An operator's resend starts a new attempt too (its `human_action` event says `toStatus: PENDING`).
    if (ATTEMPT_BOUNDARIES.has(e.type) || (e.type === "human_action" && e.data.toStatus === "PENDING")) start = i + 1;
  });
  const rounds = new Map<number, { absent: Set<string>; bad: boolean; at: number }>();
  for (const e of events.slice(start)) {
    if (e.type !== "probe") continue;
    const round = e.data.round;
    if (typeof round !== "number" || !Number.isInteger(round) || round < 1) continue;
    const r = rounds.get(round) ?? { absent: new Set<string>(), bad: false, at: e.atEpochMs };
    r.at = Math.max(r.at, e.atEpochMs);
    if (e.data.answer === "absent" && typeof e.data.probe === "string" && e.data.match === undefined) {
      r.absent.add(e.data.probe);
    } else {
      r.bad = true;
    }
    rounds.set(round, r);
  }
  if (rounds.size === 0) return { clean: 0, nextRound: 1, lastRoundAtEpochMs: null };
  const last = Math.max(...rounds.keys());
  let clean = 0;
  for (let n = last; n >= 1; n--) {
    const r = rounds.get(n);
    if (!r || r.bad || counting.length === 0 || !counting.every((k) => r.absent.has(k))) break;
    clean++;
  }
  return { clean, nextRound: last + 1, lastRoundAtEpochMs: rounds.get(last)?.at ?? null };
}
