/** What "correct" means for an aborted run: reversed or handed to a person, nothing done after the abort. */
import { describe, expect, it } from "vitest";
import { tauBenchTools } from "../src/catalog/tools.ts";
import { type AbortedRunInput, type AbortRecordView, REVERSALS, scoreAbortedRun } from "../src/replay/abort-scoring.ts";

const booking = { user_id: "u1", origin: "JFK", destination: "SFO" };
const bags = { reservation_id: "R0", total_baggages: 1, nonfree_baggages: 0, payment_id: "p" };
const actions = [
  { name: "get_user_details", kwargs: { user_id: "u1" }, write: false },
  { name: "book_reservation", kwargs: booking, write: true },
  { name: "update_reservation_baggages", kwargs: bags, write: true },
];
const booked = { tool: "book_reservation", args: booking, record: { reservation_id: "NEW1" } };
const cancelled = { tool: "cancel_reservation", args: { reservation_id: "NEW1" } };
const bagged = { tool: "update_reservation_baggages", args: bags };
const ABORT_AT = 1_000;

const rec = (stepId: string, tool: string, args: object, over: Partial<AbortRecordView> = {}): AbortRecordView => ({
  key: `k-${stepId}`,
  stepId,
  tool: `airline.${tool}`,
  args: { ...args, tenant: "t" },
  status: "SUCCEEDED",
  needsHuman: false,
  ...over,
});

const run = (over: Partial<AbortedRunInput>): AbortedRunInput => ({
  domain: "airline",
  actions,
  firstCallAt: [10, 20, 30],
  abortAnsweredAt: ABORT_AT,
  records: [rec("a1", "book_reservation", booking)],
  effects: [booked, cancelled],
  ...over,
});

describe("scoreAbortedRun", () => {
  it("a booking reversed at the remote is correct", () => {
    expect(scoreAbortedRun(run({}))).toMatchObject({ reversed: 1, unreversed: 0, doneAfterAbort: 0 });
  });

  it("a booking left at the remote with nobody asked is a violation; in the human queue it is not", () => {
    const bad = scoreAbortedRun(run({ effects: [booked] }));
    expect(bad).toMatchObject({ reversed: 0, unreversed: 1 });
    expect(bad.details[0]).toMatch(/unreversed effect: book_reservation/);
    const queued = run({ effects: [booked], records: [rec("a1", "book_reservation", booking, { needsHuman: true })] });
    expect(scoreAbortedRun(queued)).toMatchObject({ handedToPerson: 1, unreversed: 0 });
    const compensationQueued = run({
      effects: [booked],
      records: [
        rec("a1", "book_reservation", booking),
        rec("compensate:k-a1", "cancel_reservation", { reservation_id: "NEW1" }, { needsHuman: true }),
      ],
    });
    expect(scoreAbortedRun(compensationQueued)).toMatchObject({ handedToPerson: 1, unreversed: 0 });
  });

  it("one cancellation reverses one booking only", () => {
    expect(scoreAbortedRun(run({ effects: [booked, booked, cancelled] }))).toMatchObject({
      reversed: 1,
      unreversed: 1,
    });
  });

  it("an effect without compensation stays when its call was in flight at the abort, and is a violation when first called after it", () => {
    expect(scoreAbortedRun(run({ effects: [booked, cancelled, bagged] }))).toMatchObject({
      kept: 1,
      doneAfterAbort: 0,
    });
    const late = scoreAbortedRun(run({ effects: [booked, cancelled, bagged], firstCallAt: [10, 20, ABORT_AT + 5] }));
    expect(late).toMatchObject({ kept: 0, doneAfterAbort: 1 });
    expect(late.details[0]).toMatch(
      /done after the abort: update_reservation_baggages .* \(step a2\), first called 5 ms/,
    );
  });

  it("a booking first called after the abort is fine once reversed", () => {
    expect(scoreAbortedRun(run({ firstCallAt: [10, ABORT_AT + 1, null] }))).toMatchObject({
      reversed: 1,
      doneAfterAbort: 0,
    });
  });
});

describe("REVERSALS", () => {
  it("names exactly the catalog's tools that declare a compensation", () => {
    const tools = tauBenchTools({ baseUrl: "http://127.0.0.1:1", timing: "unbounded" });
    const compensable = tools.filter((t) => t.compensation).map((t) => t.name);
    expect(Object.keys(REVERSALS).sort()).toEqual(compensable.sort());
    for (const t of tools) {
      if (t.compensation) expect(t.compensation.tool).toBe(`airline.${REVERSALS[t.name]?.(booked)?.tool}`);
    }
  });
});
