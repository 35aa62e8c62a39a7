/**
 * A record's timeline read like an event history (Temporal's): each event with its offset from the
 * previous one, and the duration of a send (sent → its outcome) or of a probe where the events say it.
 */
import { formatDuration } from "./format";

/** The fields of a timeline event (`intents.get`'s events) read here. Times epoch ms. */
export interface TimelineEventIn {
  id: string;
  type: string;
  atEpochMs: number;
  data: Record<string, unknown>;
}

/** What a line of the timeline shows beside its event. Durations ms. */
export interface TimelineLine<E extends TimelineEventIn> {
  event: E;
  /** Time since the previous event (ms, ≥ 0 unless the clocks of two replicas disagree); null for the first. */
  offsetMs: number | null;
  /** The duration this event ends, or null: a send's (sent → outcome) or a probe's (start → answer). */
  duration: { ms: number; what: "sent → outcome" | "probe start → answer" } | null;
}

const num = (value: unknown): number | null => (typeof value === "number" && Number.isFinite(value) ? value : null);

/**
 * The lines of a timeline, in the order given (oldest first). A send's duration is the outcome's
 * own `durationMs` (the executor measures it) or else the time since the latest `sent` of the same
 * attempt; a probe's is its `durationMs` when the event carries one (none is guessed).
 */
export function timelineLines<E extends TimelineEventIn>(events: readonly E[]): TimelineLine<E>[] {
  const sentAt = new Map<number | null, number>();
  let lastSentAt: number | undefined;
  return events.map((event, i) => {
    const previous = i > 0 ? events[i - 1] : undefined;
    const offsetMs = previous ? event.atEpochMs - previous.atEpochMs : null;
    const attempt = num(event.data.attempt);
    let duration: TimelineLine<E>["duration"] = null;
    if (event.type === "sent") {
      sentAt.set(attempt, event.atEpochMs);
      lastSentAt = event.atEpochMs;
    }
    if (event.type === "outcome" || event.type === "late_answer") {
      // An outcome answers the latest send; a late answer names its attempt.
      const from = event.type === "outcome" ? lastSentAt : sentAt.get(attempt);
      const ms = num(event.data.durationMs) ?? (from === undefined ? null : event.atEpochMs - from);
      if (ms !== null) duration = { ms, what: "sent → outcome" };
    }
    if (event.type === "probe") {
      const own = num(event.data.durationMs);
      if (own !== null) duration = { ms: own, what: "probe start → answer" };
    }
    return { event, offsetMs, duration };
  });
}

/** An offset as the timeline shows it: "+12 ms", "+1.2 s", "+2m 05s"; "−40 ms" when clocks disagree. */
export function formatOffset(ms: number): string {
  return ms < 0 ? `−${formatDuration(-ms)}` : `+${formatDuration(ms)}`;
}

/**
 * An event's time of day to the millisecond ("14:03:07.125"), in UTC or the browser's zone: the
 * timeline's lines are ms apart, and the date is in the line's title.
 */
export function formatClock(epochMs: number, zone: "local" | "UTC"): string {
  return new Date(epochMs).toLocaleTimeString("en-GB", {
    ...(zone === "UTC" ? { timeZone: "UTC" } : {}),
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    fractionalSecondDigits: 3,
    hour12: false,
  });
}

/** A record an identity match may belong to, as a probe event names it (`owners`). */
export interface MatchOwner {
  key: string;
  runId: string;
  stepId: string;
}

/** The `owners` of a probe event's identity match (its other runs' records), or none; malformed entries are skipped. */
export function matchOwners(data: Record<string, unknown>): MatchOwner[] {
  if (!Array.isArray(data.owners)) return [];
  return data.owners.flatMap((o: unknown) => {
    const { key, runId, stepId } = (o ?? {}) as Record<string, unknown>;
    return typeof key === "string" && typeof runId === "string" && typeof stepId === "string"
      ? [{ key, runId, stepId }]
      : [];
  });
}

/** The few facts of an event worth its line (e.g. "UNKNOWN · READ_TIMEOUT", "key probe: absent"), the rest in its JSON. */
export function eventFacts(type: string, data: Record<string, unknown>): string {
  const text = (k: string) => (typeof data[k] === "string" || typeof data[k] === "number" ? String(data[k]) : null);
  const join = (...parts: (string | null)[]) => parts.filter(Boolean).join(" · ");
  switch (type) {
    case "sent":
      return join(text("attempt") && `attempt ${text("attempt")}`, text("sentKey") && `key ${text("sentKey")}`);
    case "outcome":
    case "late_answer":
      return join(text("outcome"), text("code"));
    case "probe":
      return join(
        text("probe") && `${text("probe")} probe`,
        text("answer"),
        text("match") && `match: ${text("match")}`,
      );
    case "resend":
      return join(text("attempt") && `attempt ${text("attempt")}`, text("reason"));
    case "human_action":
      return join(text("action"));
    case "conflict":
      // The same run and step asked again with other arguments (rule 4): refused, this record kept.
      return join(
        "same run and step, other arguments: refused",
        text("refusedKey") && `refused key ${text("refusedKey")}`,
      );
    default:
      return join(text("code"), text("outcome"), text("reason"));
  }
}
