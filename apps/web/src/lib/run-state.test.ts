import { describe, expect, it } from "vitest";
import type { IntentStatus } from "~/trpc/types";
import { type RunState, type RunStateInput, runState, runStateLook } from "./run-state";

const KEY = "a".repeat(32);
const rec = (status: IntentStatus, more: Partial<RunStateInput["records"][number]> = {}) => ({
  key: KEY,
  stepId: "book",
  tool: "book_hotel",
  status,
  needsHuman: false,
  compensation: null,
  ...more,
});
const compensation = rec("SUCCEEDED", { key: "b".repeat(32), stepId: `compensate:${KEY}`, tool: "cancel_hotel" });
const abort = (complete: boolean, waitingForPerson: string[] = []) => ({ complete, waitingForPerson });
const plan = {
  steps: [
    { stepId: "book", tool: "book_hotel" },
    { stepId: "pay", tool: "charge" },
  ],
};

describe("runState: the run page's badge from runs.get", () => {
  const table: [string, RunStateInput, RunState][] = [
    [
      "every step settled",
      { records: [rec("SUCCEEDED"), rec("FAILED_NO_EFFECT")], plan: null, abort: null },
      "completed",
    ],
    ["a call in flight", { records: [rec("SUCCEEDED"), rec("PENDING")], plan: null, abort: null }, "running"],
    [
      "an UNKNOWN being reconciled",
      { records: [rec("UNKNOWN"), rec("PENDING")], plan: null, abort: null },
      "reconciling",
    ],
    [
      "a record for a person",
      { records: [rec("UNKNOWN", { needsHuman: true })], plan: null, abort: null },
      "needs_person",
    ],
    ["aborted, complete", { records: [rec("SUCCEEDED"), compensation], plan: null, abort: abort(true) }, "aborted"],
    ["aborted, a step in flight", { records: [rec("PENDING")], plan: null, abort: abort(false) }, "aborting"],
    [
      "aborted, a step for a person",
      { records: [rec("SUCCEEDED")], plan: null, abort: abort(false, [KEY]) },
      "needs_person",
    ],
    [
      "an operator's compensate, no abort row",
      { records: [rec("SUCCEEDED"), compensation], plan: null, abort: null },
      "aborted",
    ],
    ["a planned step not done", { records: [rec("SUCCEEDED")], plan, abort: null }, "open"],
    ["only a plan", { records: [], plan, abort: null }, "open"],
    [
      "every planned step settled",
      { records: [rec("SUCCEEDED"), rec("FAILED_NO_EFFECT", { stepId: "pay", tool: "charge" })], plan, abort: null },
      "completed",
    ],
  ];
  it.each(table)("%s", (_name, input, expected) => {
    expect(runState(input)).toBe(expected);
  });

  it("every state has its own words", () => {
    const RUN_STATES_FOR_TEST: RunState[] = [
      "needs_person",
      "aborting",
      "reconciling",
      "running",
      "aborted",
      "open",
      "completed",
    ];
    const labels = RUN_STATES_FOR_TEST.map((s) => runStateLook(s).label);
    expect(new Set(labels).size).toBe(RUN_STATES_FOR_TEST.length);
    expect(runStateLook("needs_person").label).toBe("needs a person");
  });
});
