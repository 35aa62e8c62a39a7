/**
 * The replay report's wording (`pnpm demo`, `pnpm tau:replay`; issue 22): the fault rate and mix as
 * decimals people write (0.22, never 0.22000000000000003), and Tristate's headline keeps a gap that
 * waits for a person in its queue apart from silent gaps (`gaps 0 · 1 waiting for a person`); a
 * call's description names the τ-bench task whose data it works on, not a "tenant" the dashboard lacks.
 */
import { describe, expect, it } from "vitest";
import { tauBenchTools } from "../src/catalog/tools.ts";
import type { ReplayReport } from "../src/replay/index.ts";
import { formatReport } from "../src/replay/report.ts";
import { type TaskScore, totalsOf } from "../src/replay/scoring.ts";

const score = (agent: TaskScore["agent"], gaps: number, humanQueueItems: number) =>
  ({
    agent,
    matched: gaps === 0,
    probeable: true,
    duplicates: 0,
    gaps,
    writeCalls: 1,
    ambiguousCalls: 0,
    resolutions: {},
    humanQueueItems,
    reportedProblem: false,
    statusLies: { succeededWithoutEffect: 0, noEffectButApplied: 0 },
  }) as unknown as TaskScore;

function report(): ReplayReport {
  const scores = [
    score("tristate", 1, 1),
    score("tristate", 0, 0),
    score("retry_any", 1, 0),
    score("never_retry", 2, 0),
  ];
  return {
    replayId: "retail-demo",
    options: {
      tasks: 2,
      faultRate: 0.05 + 0.05 + 0.03 + 0.04 + 0.05,
      faultMix: { "504-after-commit": 0.1 + 0.2, reset: 0.7 },
      lagMs: 1500,
      lagResponse: 504,
      hangMs: 3000,
      seed: 1,
      concurrency: 2,
      settleMs: {},
    },
    database: "postgres",
    machine: { cpus: 2, cpuModel: "cpu", node: "v22" },
    durationMs: 1000,
    totals: {
      tristate: totalsOf("tristate", scores),
      retry_any: totalsOf("retry_any", scores),
      never_retry: totalsOf("never_retry", scores),
    },
    targets: {
      probeableAllMatched: false,
      zeroDuplicates: true,
      everyUnmatchedInHumanQueue: true,
      abortedRunsCorrect: true,
    },
    tasks: [],
    humanQueue: [],
  } as unknown as ReplayReport;
}

describe("formatReport wording", () => {
  it("the fault rate and mix are plain decimals", () => {
    expect(0.05 + 0.05 + 0.03 + 0.04 + 0.05).not.toBe(0.22); // the float noise this guards against
    const out = formatReport(report());
    expect(out).toContain("fault rate 0.22 on write requests (mix 504-after-commit=0.3,reset=0.7;");
    expect(out).not.toMatch(/0\.\d{10,}/);
  });

  it("Tristate's headline: silent gaps apart from gaps waiting for a person; a baseline's gaps as they are", () => {
    const out = formatReport(report());
    expect(out).toContain("Tristate: matched 1/2 · duplicates 0 · gaps 0 · 1 waiting for a person · status lies 0");
    expect(out).toContain("retry on any error: matched 0/1 · duplicates 0 · gaps 1 · status lies 0");
    expect(out).toContain("never retry: matched 0/1 · duplicates 0 · gaps 2 · status lies 0");
  });

  it("totalsOf splits the gaps by whether the task has a record in the human queue", () => {
    const t = totalsOf("tristate", [score("tristate", 2, 1), score("tristate", 1, 0)]);
    expect(t).toMatchObject({ gaps: 3, silentGaps: 1, gapsWaitingForPerson: 2 });
  });
});

describe("a call's description (the queue line)", () => {
  it("names the task whose copy of the data the call works on", () => {
    const tools = tauBenchTools({ baseUrl: "http://127.0.0.1:1", timing: "unbounded" });
    const tool = tools.find((t) => t.name === "retail.cancel_pending_order");
    const text = tool?.describe?.({ order_id: "#W1", reason: "no longer needed", tenant: "retail-train-27" } as never);
    expect(text).toBe("retail cancel_pending_order order #W1 (task retail-train-27)");
  });
});
