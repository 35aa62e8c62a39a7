import type { ReplayTask } from "@tristate/example-tau-bench/replay";
import { describe, expect, it } from "vitest";
import type { AgentResult } from "../src/agent.ts";
import { checkerSelfTest, checkTask, type RecordRow, type TaskObservation } from "../src/checker.ts";
import { parseChaosArgs } from "../src/options.ts";

const cancel = { order_id: "#W1" };
const refund = { order_id: "#W2", item_ids: ["1"] };
const task: ReplayTask = {
  id: "retail-test-1",
  domain: "retail",
  actions: [
    { name: "get_order_details", kwargs: cancel, write: false },
    { name: "cancel_pending_order", kwargs: cancel, write: true },
    { name: "return_delivered_order_items", kwargs: refund, write: true },
  ],
  oracle: { outputs: ["{}", "{...}", "{...}"], state_hash: "", state_hash_jcs: "" },
};

const record = (tool: string, args: object, status: RecordRow["status"], needsHuman = false): RecordRow => ({
  key: `${tool}-${status}`,
  stepId: "a1",
  tool: `retail.${tool}`,
  args: { ...args, tenant: "t1" },
  status,
  resolution: needsHuman ? "needs_human" : null,
  needsHuman,
});

const agent = (over: Partial<AgentResult> = {}): AgentResult => ({
  runId: "run-1",
  told: [{ status: "SUCCEEDED" }, { status: "SUCCEEDED" }, { status: "SUCCEEDED" }],
  stopped: null,
  calls: 3,
  unanswered: 0,
  firstCallAt: [10, 20, 30],
  ...over,
});

const clean = (): TaskObservation => ({
  task,
  agent: agent(),
  aborted: false,
  records: [
    record("cancel_pending_order", cancel, "SUCCEEDED"),
    record("return_delivered_order_items", refund, "SUCCEEDED"),
  ],
  effects: [
    { tool: "cancel_pending_order", args: cancel },
    { tool: "return_delivered_order_items", args: refund },
  ],
});

describe("checkTask", () => {
  it("a run that went through with every effect once: no violation", () => {
    expect(checkTask(clean()).violations).toEqual({
      duplicates: 0,
      silentGaps: 0,
      stuck: 0,
      statusLies: 0,
      abortUndone: 0,
    });
  });

  it("an effect applied twice for one intent record is a duplicate", () => {
    const o = clean();
    o.effects.push({ tool: "cancel_pending_order", args: cancel });
    expect(checkTask(o).violations.duplicates).toBe(1);
  });

  it("a missing effect the agent was told SUCCEEDED is a silent gap and a status lie", () => {
    const o = clean();
    o.effects.pop();
    const v = checkTask(o).violations;
    expect(v.silentGaps).toBe(1);
    expect(v.statusLies).toBe(2); // the record says SUCCEEDED, and so did the envelope
  });

  it("a missing effect whose record waits for a person, or whose agent stopped and said so, is no silent gap", () => {
    const queued = clean();
    queued.effects.pop();
    queued.records[1] = record("return_delivered_order_items", refund, "UNKNOWN", true);
    queued.agent = agent({
      told: [{ status: "SUCCEEDED" }, { status: "SUCCEEDED" }, { status: "UNKNOWN" }],
      stopped: "needs_human",
    });
    expect(checkTask(queued).violations).toEqual({
      duplicates: 0,
      silentGaps: 0,
      stuck: 0,
      statusLies: 0,
      abortUndone: 0,
    });
    const aborted = {
      ...clean(),
      aborted: true,
      agent: agent({ stopped: "aborted", told: [{ status: "SUCCEEDED" }] }),
    };
    aborted.effects = [];
    aborted.records = [];
    expect(checkTask(aborted).violations.silentGaps).toBe(0);
  });

  it("PENDING, or UNKNOWN outside the queue, after the settle is stuck", () => {
    const o = clean();
    o.records[1] = record("return_delivered_order_items", refund, "PENDING");
    o.agent = agent({ stopped: "unresolved" });
    expect(checkTask(o).violations.stuck).toBe(1);
    o.records[1] = record("return_delivered_order_items", refund, "UNKNOWN");
    expect(checkTask(o).violations.stuck).toBe(1);
    o.records[1] = record("return_delivered_order_items", refund, "UNKNOWN", true);
    expect(checkTask(o).violations.stuck).toBe(0);
  });

  it("FAILED_NO_EFFECT with the effect in the log is a status lie", () => {
    const o = clean();
    o.records[0] = record("cancel_pending_order", cancel, "FAILED_NO_EFFECT");
    o.agent = agent({
      told: [{ status: "SUCCEEDED" }, { status: "FAILED_NO_EFFECT", code: "REJECTED" }, { status: "SUCCEEDED" }],
    });
    expect(checkTask(o).violations.statusLies).toBe(2);
  });

  it("a compensation with its own record is no duplicate", () => {
    const o = { ...clean(), aborted: true, agent: agent({ stopped: "aborted" }) };
    o.records.push(record("cancel_pending_order", { order_id: "#W9" }, "SUCCEEDED"));
    o.effects.push({ tool: "cancel_pending_order", args: { order_id: "#W9" } });
    expect(checkTask(o).violations.duplicates).toBe(0);
  });
});

describe("checkTask on an aborted run (issue 20)", () => {
  const booking = { user_id: "u1", origin: "JFK", destination: "SFO" };
  const airline: ReplayTask = {
    id: "airline-test-1",
    domain: "airline",
    actions: [
      { name: "book_reservation", kwargs: booking, write: true },
      { name: "update_reservation_baggages", kwargs: { reservation_id: "R1", total_baggages: 1 }, write: true },
    ],
    oracle: { outputs: ["{...}", "{...}"], state_hash: "", state_hash_jcs: "" },
  };
  const rec = (stepId: string, tool: string, args: object, needsHuman = false): RecordRow => ({
    key: `k-${stepId}`,
    stepId,
    tool: `airline.${tool}`,
    args: { ...args, tenant: "t1" },
    status: "SUCCEEDED",
    resolution: null,
    needsHuman,
  });
  const booked = { tool: "book_reservation", args: booking, record: { reservation_id: "NEW1" } };
  const aborted = (over: Partial<TaskObservation> = {}): TaskObservation => ({
    task: airline,
    agent: agent({ stopped: "aborted", told: [{ status: "SUCCEEDED" }], firstCallAt: [10] }),
    aborted: true,
    abortAnsweredAt: 100,
    records: [
      rec("a0", "book_reservation", booking),
      rec("compensate:k-a0", "cancel_reservation", { reservation_id: "NEW1" }),
    ],
    effects: [booked, { tool: "cancel_reservation", args: { reservation_id: "NEW1" } }],
    ...over,
  });

  it("a booking that settled after its abort and was reversed: no violation", () => {
    expect(checkTask(aborted()).violations).toEqual({
      duplicates: 0,
      silentGaps: 0,
      stuck: 0,
      statusLies: 0,
      abortUndone: 0,
    });
  });

  it("a booking left at the remote with nobody asked is flagged; waiting for a person it is not", () => {
    const left = aborted({ records: [rec("a0", "book_reservation", booking)], effects: [booked] });
    const c = checkTask(left);
    expect(c.violations.abortUndone).toBe(1);
    expect(c.details[0]).toMatch(/unreversed effect: book_reservation/);
    const queued = { ...left, records: [rec("a0", "book_reservation", booking, true)] };
    expect(checkTask(queued).violations.abortUndone).toBe(0);
  });

  it("a step first called after the abort was answered that took effect is flagged", () => {
    const bags = { tool: "update_reservation_baggages", args: { reservation_id: "R1", total_baggages: 1 } };
    const o = aborted();
    o.records.push(rec("a1", bags.tool, bags.args));
    o.effects.push(bags);
    o.agent = agent({
      stopped: null,
      told: [{ status: "SUCCEEDED" }, { status: "SUCCEEDED" }],
      firstCallAt: [10, 150],
    });
    expect(checkTask(o).violations.abortUndone).toBe(1);
    o.agent.firstCallAt = [10, 90]; // in flight when the abort was answered: it stays (no compensation declared)
    expect(checkTask(o).violations.abortUndone).toBe(0);
  });
});

describe("checkerSelfTest", () => {
  it("flags the planted duplicate, the planted gap and the planted unreversed abort", () => {
    expect(checkerSelfTest([clean()])).toEqual({ duplicate: true, gap: true, abort: true });
  });

  it("plants into the oracle's own run when no task of the round went through", () => {
    const o = { ...clean(), agent: agent({ stopped: "gave_up" }), effects: [], records: [] };
    expect(checkerSelfTest([o])).toEqual({ duplicate: true, gap: true, abort: true });
  });
});

describe("parseChaosArgs", () => {
  it("refuses an unknown fault kind, naming it", () => {
    expect(() => parseChaosArgs(["--faults", "kill,meteor"])).toThrow(/unknown kind "meteor"/);
  });

  it("the default faults include the abort racing in-flight calls", () => {
    const o = parseChaosArgs(["--seed", "1"]);
    if ("help" in o) throw new Error("help");
    expect(o.faults).toContain("abortrace");
  });

  it("--kills paces every kind to reach it", () => {
    const o = parseChaosArgs(["--minutes", "4", "--kills", "50", "--seed", "1"]);
    if ("help" in o) throw new Error("help");
    expect(o.intervals.pgcrash).toBeLessThanOrEqual((4 * 60_000 * 0.35) / 50);
    expect(o.seed).toBe(1);
  });
});
