/**
 * The targets line of the replay report (`pnpm tau:replay`, `pnpm demo`): a probe-able task left
 * unmatched because its refused resend waits in the human queue (rule 5f, e.g. retail-train-27 under
 * seed 1: reset before commit, probes absent, the same-key resend refused "insufficient gift card
 * balance" as in the ground truth) is named as such, the target itself stays NO.
 */
import { describe, expect, it } from "vitest";
import type { QueueItem, ReplayReport, TaskResult } from "../src/replay/index.ts";
import { targetsLine, tasksWaitingOnRefusedResend } from "../src/replay/report.ts";

const replayId = "tau-test";

function task(taskId: string, matched: boolean, probeable = true): TaskResult {
  const score = { matched, probeable, humanQueueItems: matched ? 0 : 1 };
  return {
    taskId,
    domain: "retail",
    probeable,
    writes: 2,
    scores: { tristate: score, retry_any: score, never_retry: score },
  } as unknown as TaskResult;
}

function queued(taskId: string, code: string): QueueItem {
  return {
    key: `k-${taskId}`,
    tool: "retail.modify_pending_order_payment",
    runId: `${replayId}.${taskId}`,
    stepId: "a0",
    effect: "order #W5199551",
    error: { code, message: "…" },
  };
}

const targets = (probeableAllMatched: boolean): ReplayReport["targets"] => ({
  probeableAllMatched,
  zeroDuplicates: true,
  everyUnmatchedInHumanQueue: true,
  abortedRunsCorrect: true,
});

describe("targets line", () => {
  it("names the probe-able unmatched tasks waiting on a refused resend, the target still NO", () => {
    const report = {
      replayId,
      tasks: [task("retail-train-1", true), task("retail-train-27", false), task("airline-test-16", false, false)],
      humanQueue: [queued("retail-train-27", "RESEND_REFUSED"), queued("airline-test-16", "NO_PROBE")],
      targets: targets(false),
    };
    expect(tasksWaitingOnRefusedResend(report)).toEqual(["retail-train-27"]);
    expect(targetsLine(report)).toContain(
      "every probe-able task matched: NO (1 waiting in the human queue on a refused resend, rule 5f: retail-train-27);",
    );
  });

  it("an unmatched task queued for another reason, or another replay's refused resend, gets a bare NO", () => {
    const report = {
      replayId,
      tasks: [task("retail-train-5", false), task("retail-train-27", false)],
      humanQueue: [
        queued("retail-train-5", "AMBIGUOUS_IDENTITY_MATCH"),
        { ...queued("retail-train-27", "RESEND_REFUSED"), runId: "other.retail-train-27" },
      ],
      targets: targets(false),
    };
    expect(tasksWaitingOnRefusedResend(report)).toEqual([]);
    expect(targetsLine(report)).toContain("every probe-able task matched: NO; zero duplicate effects: yes;");
  });

  it("all matched: yes, with nothing added", () => {
    const report = { replayId, tasks: [task("retail-train-1", true)], humanQueue: [], targets: targets(true) };
    expect(targetsLine(report)).toBe(
      "targets (Tristate): every probe-able task matched: yes; zero duplicate effects: yes; every unmatched task in the human queue: yes; every aborted run correct: yes",
    );
  });
});
