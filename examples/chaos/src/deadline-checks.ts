/**
 * The deadline checks after every round (issue 21 §1): every call the agents made was answered by
 * its deadline minus the executor's reserve (judged on the agent's side, against the deadline it
 * sent), and no request reached the remote after its own `Request-Deadline` (judged on the remote's
 * side, from the τ-bench service's request log).
 */
import { DEFAULT_RESERVE_MS } from "@tristate/core";
import type { RequestArrival } from "@tristate/example-tau-bench";

/**
 * Allowance for the HTTP hop from the executor back to the agent (serialising, the loopback socket,
 * the agent's event loop on a loaded 2-core machine), ms: an answer is on time when it reached the
 * agent by deadline − {@link DEFAULT_RESERVE_MS} + this.
 */
export const ANSWER_HOP_TOLERANCE_MS = 250;

/** How one agent call ended, as the agent saw it. */
export interface CallTiming {
  runId: string;
  stepId: string;
  /** The replica called. */
  url: string;
  /** When the request was sent, and the deadline it carried, epoch ms. */
  sentAt: number;
  deadlineEpochMs: number;
  /** When the answer (any HTTP status) or the failure came, epoch ms. */
  endedAt: number;
  /**
   * `answer`: an HTTP response; `gave_up`: none within the client's timeout (the deadline + 5 s);
   * `lost`: the connection was refused or reset (a killed replica).
   */
  outcome: "answer" | "gave_up" | "lost";
  /** HTTP status of an answer. */
  status?: number;
}

/** Counts of one round's (or campaign's) deadline checks. */
export interface DeadlineTally {
  /** Agent calls made. */
  calls: number;
  /** Answers that reached the agent after deadline − reserve + tolerance, and calls lost after that moment. */
  lateAnswers: number;
  /** Calls never answered: the agent gave up 5 s after the deadline. */
  gaveUp: number;
  /** Calls whose connection was refused or reset before their answer was due (killed replicas): not a failure. */
  lost: number;
  /** Tool requests the remote received, and those that arrived after their own `Request-Deadline`. */
  sends: number;
  lateSends: number;
  /** Tool requests without a `Request-Deadline` header (reported, not judged). */
  sendsWithoutDeadline: number;
  /** Latest answer past deadline − reserve, and latest send past its deadline, ms (0: none). */
  worstAnswerLateMs: number;
  worstSendLateMs: number;
}

/** Nothing counted. */
export const NO_DEADLINE_TALLY: DeadlineTally = Object.freeze({
  calls: 0,
  lateAnswers: 0,
  gaveUp: 0,
  lost: 0,
  sends: 0,
  lateSends: 0,
  sendsWithoutDeadline: 0,
  worstAnswerLateMs: 0,
  worstSendLateMs: 0,
});

/** The failures among the counts (must be 0): late answers, calls never answered, late sends. */
export const deadlineFailures = (t: DeadlineTally): number => t.lateAnswers + t.gaveUp + t.lateSends;

/** Adds `b` into `a`. */
export function addDeadlineTallies(a: DeadlineTally, b: DeadlineTally): DeadlineTally {
  return {
    calls: a.calls + b.calls,
    lateAnswers: a.lateAnswers + b.lateAnswers,
    gaveUp: a.gaveUp + b.gaveUp,
    lost: a.lost + b.lost,
    sends: a.sends + b.sends,
    lateSends: a.lateSends + b.lateSends,
    sendsWithoutDeadline: a.sendsWithoutDeadline + b.sendsWithoutDeadline,
    worstAnswerLateMs: Math.max(a.worstAnswerLateMs, b.worstAnswerLateMs),
    worstSendLateMs: Math.max(a.worstSendLateMs, b.worstSendLateMs),
  };
}

/** One service instance's request log, with the run that used it. */
export interface InstanceRequests {
  runId: string;
  /** `<domain>.<tenant>`. */
  segment: string;
  requests: readonly RequestArrival[];
}

/**
 * Judges a round: the agents' call timings and the remote's request logs. `skewOf(url)` names the
 * clock skew of the replica behind a URL, ms, for the details (a replica whose clock is behind
 * judges deadlines late; the check does not excuse it).
 */
export function checkDeadlines(
  timings: readonly CallTiming[],
  instances: readonly InstanceRequests[],
  skewOf: (url: string) => number = () => 0,
): { tally: DeadlineTally; details: string[] } {
  const t = { ...NO_DEADLINE_TALLY };
  const details: string[] = [];
  for (const c of timings) {
    t.calls++;
    const dueAt = c.deadlineEpochMs - DEFAULT_RESERVE_MS;
    const lateMs = c.endedAt - dueAt;
    const late = lateMs > ANSWER_HOP_TOLERANCE_MS;
    const skew = skewOf(c.url);
    const where = `${c.runId} ${c.stepId} on ${c.url}${skew ? ` (clock ${skew > 0 ? "+" : ""}${skew} ms)` : ""}`;
    if (c.outcome === "gave_up") {
      t.gaveUp++;
      t.worstAnswerLateMs = Math.max(t.worstAnswerLateMs, lateMs);
      details.push(`never answered: ${where}, sent ${c.deadlineEpochMs - c.sentAt} ms before its deadline`);
    } else if (late) {
      t.lateAnswers++;
      t.worstAnswerLateMs = Math.max(t.worstAnswerLateMs, lateMs);
      const what = c.outcome === "lost" ? "connection lost" : `answered ${c.status}`;
      details.push(`late answer: ${where} ${what} ${lateMs} ms after deadline − reserve`);
    } else if (c.outcome === "lost") t.lost++;
  }
  for (const i of instances) {
    for (const r of i.requests) {
      t.sends++;
      if (r.deadlineEpochMs === null) {
        t.sendsWithoutDeadline++;
        continue;
      }
      const lateMs = r.at - r.deadlineEpochMs;
      if (lateMs <= 0) continue;
      t.lateSends++;
      t.worstSendLateMs = Math.max(t.worstSendLateMs, lateMs);
      details.push(
        `send after its deadline: ${i.runId} ${i.segment} ${r.kind} ${r.tool}${r.key ? ` key ${r.key}` : ""} arrived ${lateMs} ms after its Request-Deadline`,
      );
    }
  }
  return { tally: t, details };
}

/** The request log of one τ-bench service instance. */
async function requestsOf(serviceUrl: string, segment: string): Promise<RequestArrival[]> {
  const res = await fetch(`${serviceUrl}/${segment}/requests`);
  if (!res.ok) throw new Error(`GET ${segment}/requests → ${res.status}`);
  return ((await res.json()) as { requests: RequestArrival[] }).requests;
}

/** A line for the round's report. */
export function deadlineText(t: DeadlineTally): string {
  return `deadlines: late answers ${t.lateAnswers} never answered ${t.gaveUp} late sends ${t.lateSends} (of ${t.calls} calls, ${t.sends} sends)`;
}

/**
 * Reads the request log of every run's service instance and judges the round's timings
 * ({@link checkDeadlines}).
 */
export async function judgeRoundDeadlines(
  serviceUrl: string,
  runs: readonly { runId: string; segment: string }[],
  timings: readonly CallTiming[],
  skewOf: (url: string) => number,
): Promise<{ tally: DeadlineTally; details: string[] }> {
  const instances = await Promise.all(
    runs.map(async (r) => ({ ...r, requests: await requestsOf(serviceUrl, r.segment) })),
  );
  return checkDeadlines(timings, instances, skewOf);
}
