/**
 * Fault-injected replay through the real executor (its HTTP API, PostgreSQL via createTestDatabase):
 * 100 retail tasks and the 20 airline ones at a 20 % fault rate on writes. Tristate's targets: every
 * task whose write tools have a probe reaches the oracle state, zero duplicate effects, and every
 * task it could not finish has a record in the human queue.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { visibleSplits } from "../src/replay/cli.ts";
import { type ReplayEnvironment, startReplayEnvironment } from "../src/replay/environment.ts";
import { loadReplayTasks, type ReplayReport, replayTasks } from "../src/replay/replay.ts";
import { DATA_DIR, HAVE_DATA } from "./support.ts";

describe.skipIf(!HAVE_DATA)("fault-injected replay (120 tasks, 20 % faults)", () => {
  let env: ReplayEnvironment | undefined;
  let report: ReplayReport;

  beforeAll(async () => {
    const all = loadReplayTasks(visibleSplits(DATA_DIR));
    const tasks = [
      ...all.filter((t) => t.domain === "retail").slice(0, 100),
      ...all.filter((t) => t.domain === "airline"),
    ];
    env = await startReplayEnvironment({
      faults: { rate: 0.2, seed: 7 },
      maxInstances: tasks.length + 8,
      database: "test",
    });
    report = await replayTasks(env, tasks, { concurrency: 16 });
  }, 110_000);

  afterAll(async () => {
    await env?.close();
  });

  it("faults did happen, and the baselines suffered from them", () => {
    const t = report.totals;
    expect(report.options.tasks).toBe(120);
    expect(t.never_retry.ambiguousCalls).toBeGreaterThan(10);
    expect(t.never_retry.gaps).toBeGreaterThan(0);
    expect(Object.values(t.tristate.resolutions).reduce((a, b) => a + b, 0)).toBeGreaterThan(10);
  });

  it("Tristate: every probe-able task matches the oracle, zero duplicates, the rest in the human queue", () => {
    const t = report.totals.tristate;
    expect(t.probeableMatched).toBe(t.probeableTasks);
    expect(t.duplicateEffects).toBe(0);
    expect(t.unmatchedNotQueued).toBe(0);
    expect(t.silentlyWrong).toBe(0);
    for (const r of report.tasks) {
      const s = r.scores.tristate;
      if (!s.matched) expect(s.humanQueueItems, r.taskId).toBeGreaterThan(0);
    }
    expect(report.targets).toEqual({
      probeableAllMatched: true,
      zeroDuplicates: true,
      everyUnmatchedInHumanQueue: true,
    });
  });
});
