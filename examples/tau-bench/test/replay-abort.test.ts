/**
 * The replay's abort fault through the real executor (HTTP API, PostgreSQL via createTestDatabase):
 * every airline task aborted mid-plan while a write call is in flight (the bookings among them),
 * half through `runs.abort`, half through `runs.operatorAbort`, the agent going on with its plan.
 * Judged at the remote: every booking reversed or handed to a person, nothing done after the abort,
 * no duplicate, no status lie (issue 20 §1, DESIGN.md rule 13).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { visibleSplits } from "../src/replay/cli.ts";
import { type ReplayEnvironment, startReplayEnvironment } from "../src/replay/environment.ts";
import { loadReplayTasks, type ReplayReport, replayTasks } from "../src/replay/replay.ts";
import { DATA_DIR } from "./support.ts";

describe("replay with the abort fault (20 airline tasks, every run with a write aborted)", () => {
  let env: ReplayEnvironment | undefined;
  let report: ReplayReport;

  beforeAll(async () => {
    const tasks = loadReplayTasks(visibleSplits(DATA_DIR)).filter((t) => t.domain === "airline");
    env = await startReplayEnvironment({ faults: { rate: 0.2, seed: 3 }, maxInstances: 64, database: "test" });
    report = await replayTasks(env, tasks, { concurrency: 8, abort: { share: 1, seed: 3 } });
  }, 200_000);

  afterAll(async () => {
    await env?.close();
  });

  it("aborted the runs with writes, through both paths, and every abort was answered", () => {
    const a = report.aborts;
    expect(a?.runs).toBeGreaterThanOrEqual(14); // 15 of the 20 airline tasks have a write
    expect(a?.viaAgent).toBeGreaterThan(0);
    expect(a?.viaOperator).toBeGreaterThan(0);
    expect(a?.unanswered).toBe(0);
  });

  it("every aborted run is correct at the remote: bookings reversed or with a person, nothing done after the abort", () => {
    const a = report.aborts;
    expect(a?.details).toEqual([]);
    expect(a).toMatchObject({ unreversed: 0, doneAfterAbort: 0, incorrectRuns: 0 });
    expect(report.targets.abortedRunsCorrect).toBe(true);
    // The bookings were raced: each reversed or handed to a person (7 bookings in 5 tasks, some refused
    // before they were sent, which is also correct).
    expect((a?.reversed ?? 0) + (a?.handedToPerson ?? 0)).toBeGreaterThan(0);
    // The agent went on after the abort and was refused.
    expect(a?.refusedAfterAbort).toBeGreaterThan(0);
  });

  it("no duplicate and no status lie, reversals included", () => {
    const t = report.totals.tristate;
    expect(t.duplicateEffects).toBe(0);
    expect(t.statusLies).toBe(0);
  });
});
