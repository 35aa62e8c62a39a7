import { DEFAULT_RESERVE_MS } from "@tristate/core";
import { describe, expect, it } from "vitest";
import { killsTarget } from "../src/db-stall.ts";
import { ANSWER_HOP_TOLERANCE_MS, type CallTiming, checkDeadlines, deadlineFailures } from "../src/deadline-checks.ts";
import { parseChaosArgs } from "../src/options.ts";

const deadline = 100_000;
const call = (endedAt: number, outcome: CallTiming["outcome"] = "answer"): CallTiming => ({
  runId: "run-1",
  stepId: "a1",
  url: "http://127.0.0.1:1",
  sentAt: deadline - 10_000,
  deadlineEpochMs: deadline,
  endedAt,
  outcome,
  ...(outcome === "answer" ? { status: 200 } : {}),
});
const due = deadline - DEFAULT_RESERVE_MS;
const requests = (...arrivals: [number, number | null][]) => [
  {
    runId: "run-1",
    segment: "retail.t1",
    requests: arrivals.map(([at, deadlineEpochMs]) => ({
      tool: "cancel_pending_order",
      kind: "write" as const,
      at,
      deadlineEpochMs,
    })),
  },
];

describe("checkDeadlines", () => {
  it("an answer by deadline − reserve (+ the hop's tolerance) and sends before their deadline: no failure", () => {
    const { tally } = checkDeadlines(
      [call(due - 3000), call(due + ANSWER_HOP_TOLERANCE_MS)],
      requests([deadline - 1, deadline], [deadline + 5000, null]),
    );
    expect(deadlineFailures(tally)).toBe(0);
    expect(tally.calls).toBe(2);
    expect(tally.sends).toBe(2);
    expect(tally.sendsWithoutDeadline).toBe(1);
  });

  it("an answer after deadline − reserve + tolerance is late, even one the deadline itself would allow", () => {
    const { tally, details } = checkDeadlines([call(due + ANSWER_HOP_TOLERANCE_MS + 1)], []);
    expect(tally.lateAnswers).toBe(1);
    expect(details[0]).toMatch(/late answer: run-1 a1 .* 251 ms after deadline − reserve/);
  });

  it("a call the agent gave up on is a failure; a connection lost before the answer was due is not", () => {
    const { tally } = checkDeadlines([call(deadline + 5000, "gave_up"), call(due - 100, "lost")], []);
    expect(tally.gaveUp).toBe(1);
    expect(tally.lost).toBe(1);
    expect(deadlineFailures(tally)).toBe(1);
  });

  it("a connection lost after the answer was due counts as a late answer", () => {
    expect(checkDeadlines([call(due + 40_000, "lost")], []).tally.lateAnswers).toBe(1);
  });

  it("a request that reached the remote after its own Request-Deadline is a late send", () => {
    const { tally, details } = checkDeadlines([], requests([deadline + 1, deadline]));
    expect(tally.lateSends).toBe(1);
    expect(tally.worstSendLateMs).toBe(1);
    expect(details[0]).toMatch(
      /send after its deadline: run-1 retail\.t1 write cancel_pending_order arrived 1 ms after/,
    );
  });
});

describe("dbstall under --kills", () => {
  it("needs min(N, half a firing per minute) stalls; every other kind needs N", () => {
    expect(killsTarget("dbstall", 50, 8)).toBe(4);
    expect(killsTarget("dbstall", 2, 60)).toBe(2);
    expect(killsTarget("dbstall", 50, 1)).toBe(1);
    expect(killsTarget("kill", 50, 8)).toBe(50);
  });

  it("paces dbstall to its own target, so CI's 8 minutes see 4 stalls", () => {
    const o = parseChaosArgs(["--minutes", "8", "--kills", "50", "--seed", "1"]);
    if ("help" in o) throw new Error("help");
    expect(o.faults).toContain("dbstall");
    expect(o.intervals.dbstall).toBe((8 * 60_000 * 0.35) / 4);
  });
});
