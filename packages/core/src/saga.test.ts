import { startTripServices, type TripServices, type TripToolOverrides, tripTools } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canon } from "./canon.ts";
import { isCompensationStep, registeredCompensation } from "./compensation.ts";
import { Deadline } from "./deadline.ts";
import { NotSentError } from "./errors.ts";
import { createExecutor, type Executor, type ExecutorOptions } from "./executor.ts";
import { MemoryIntentStore } from "./memory-intent-store.ts";
import { defineTool } from "./tool.ts";

const HOTEL = { hotel_id: "H-1", guest_ref: "G-1", check_in: "2026-07-01", nights: 2 };
const FLIGHT = { flight_no: "TP1", passenger_ref: "G-1" };
const EMAIL = { to: "g1@example.com", trip_ref: "T-1" };
const turn = () => Deadline.after(5_000);

describe("saga.ts and policies.ts on MemoryIntentStore", () => {
  let services: TripServices;
  let store: MemoryIntentStore;

  beforeEach(async () => {
    services = await startTripServices();
    store = new MemoryIntentStore();
  });
  afterEach(async () => {
    await services.close();
  });

  function executor(overrides: TripToolOverrides = {}, options: Partial<ExecutorOptions> = {}): Executor {
    return createExecutor({
      store,
      tools: tripTools(services, overrides),
      probe: { spacingMs: 0, timeoutMs: 500 },
      reserveMs: 100,
      minCallBudgetMs: 100,
      ...options,
    });
  }
  const call = (ex: Executor, stepId: string, tool: string, args: unknown, runId = "run-1") =>
    ex.call({ runId, stepId, tool, args, deadline: turn() });

  it("registeredCompensation: the spec before the call, its arguments filled from the result", () => {
    const [bookHotel, cancelHotel, , , sendItinerary] = tripTools(services);
    expect(registeredCompensation(cancelHotel!)).toBeNull();
    expect(registeredCompensation(bookHotel!)).toEqual({ tool: "cancel_hotel", kind: "compensation", args: null });
    expect(registeredCompensation(bookHotel!, HOTEL, { booking_ref: "HB-9" })).toEqual({
      tool: "cancel_hotel",
      kind: "compensation",
      args: { booking_ref: "HB-9" },
    });
    expect(registeredCompensation(sendItinerary!, EMAIL, {})).toEqual({
      tool: "send_correction",
      kind: "corrective",
      args: EMAIL,
    });
    const throwing = defineTool({
      ...bookHotel!,
      compensation: {
        tool: "cancel_hotel",
        args: () => {
          throw new Error("no booking_ref");
        },
      },
    });
    expect(registeredCompensation(throwing, HOTEL, undefined)).toEqual({
      tool: "cancel_hotel",
      kind: "compensation",
      args: null,
    });
    expect(isCompensationStep("compensate:abc")).toBe(true);
    expect(isCompensationStep("correct:abc")).toBe(true);
    expect(isCompensationStep("hotel")).toBe(false);
  });

  it("abortRun: latest step first, only confirmed effects, each once; a second abort replays", async () => {
    const ex = executor();
    const hotel = await call(ex, "hotel", "book_hotel", HOTEL);
    const flight = await call(ex, "flight", "book_flight", FLIGHT);
    services.flightNoSeats = true;
    const flight2 = await call(ex, "flight-2", "book_flight", { ...FLIGHT, flight_no: "TP2" });
    const refund = await call(ex, "refund", "issue_refund", { order_id: "A-1", amount: "10" });
    expect([hotel.status, flight.status, flight2.status, refund.status]).toEqual([
      "SUCCEEDED",
      "SUCCEEDED",
      "FAILED_NO_EFFECT",
      "SUCCEEDED",
    ]);

    const report = await ex.abortRun("run-1", turn());
    expect(report.steps.map((s) => [s.stepId, s.outcome])).toEqual([
      ["refund", "no_compensation"],
      ["flight-2", "no_effect"],
      ["flight", "compensated"],
      ["hotel", "compensated"],
    ]);
    expect(report).toMatchObject({ complete: true, needsHuman: 0 });
    expect(report.summary).toMatch(/^Run run-1 aborted: 2 effect\(s\) reversed, 1 step\(s\) had no effect/);
    expect(report.summary).not.toMatch(/\s\s/);
    // A run with nothing recorded: one sentence, then the advice, single-spaced.
    const empty = await ex.abortRun("run-empty", turn());
    expect(empty.summary).toMatch(/^Run run-empty aborted: nothing to undo\. Do not redo/);
    expect(services.posts.hotelCancellations).toBe(1);
    expect(services.posts.flightCancellations).toBe(1);

    const again = await ex.abortRun("run-1", turn());
    expect(again.steps.map((s) => s.outcome)).toEqual(report.steps.map((s) => s.outcome));
    expect(again.steps.filter((s) => s.compensation).every((s) => s.compensation!.replayed)).toBe(true);
    expect(services.posts.hotelCancellations + services.posts.flightCancellations).toBe(2);
    // The agent's repeat of a reversed step replays it, and says it was undone, never "done".
    const repeat = await call(ex, "hotel", "book_hotel", HOTEL);
    expect(repeat).toMatchObject({ status: "SUCCEEDED", replayed: true });
    expect(repeat.message).toMatch(/was later reversed \(\w+\).*tell the user it was undone/);
    expect(services.posts.hotelCancellations).toBe(1);
    // The compensations' own records are not compensated in turn.
    expect((await store.listByRun("run-1")).filter((r) => isCompensationStep(r.stepId))).toHaveLength(2);
  });

  it("abortRun: a call in flight (PENDING within its lease) is reported in_flight and left alone", async () => {
    const ex = executor();
    const key = ex.keyFor({ runId: "run-1", stepId: "hotel", tool: "book_hotel", args: HOTEL });
    const now = Date.now();
    await store.claim(
      {
        key,
        runId: "run-1",
        stepId: "hotel",
        tool: "book_hotel",
        args: HOTEL,
        identity: {},
        attempt: 1,
        leaseUntilEpochMs: now + 60_000,
        compensation: { tool: "cancel_hotel", kind: "compensation", args: null },
        createdAtEpochMs: now,
        traceId: null,
      },
      [],
      now,
    );
    const report = await ex.abortRun("run-1", turn());
    expect(report.steps.map((s) => s.outcome)).toEqual(["in_flight"]);
    expect(report.steps[0]!.message).toMatch(/still in flight; it will be undone when it settles/);
    expect(report.complete).toBe(false);
    expect(services.probes.hotelBookings + services.posts.hotelCancellations).toBe(0);
    expect((await store.get(key))!.status).toBe("PENDING");
    await expect(ex.abortRun("", turn())).rejects.toThrow(TypeError);
    await expect(ex.abortRun("run-1", 5_000 as never)).rejects.toThrow(TypeError);
  });

  it("plan policy: a new attempt of an irreversible step after FAILED_NO_EFFECT is a new send, checked against the plan like a first call (nothing sent)", async () => {
    let sends = 0;
    const notify = defineTool({
      name: "notify_once",
      kind: "unsafe",
      irreversible: true,
      identity: { to: canon.lower },
      timeoutMs: 500,
      invoke: async () => {
        sends++;
        throw new NotSentError("connection refused");
      },
    });
    const ex = createExecutor({ store, tools: [...tripTools(services), notify], reserveMs: 100, minCallBudgetMs: 100 });
    expect(await call(ex, "notify", "notify_once", { to: "a@example.com" }, "run-retry")).toMatchObject({
      status: "FAILED_NO_EFFECT",
    });
    expect(sends).toBe(1);
    // The plan now puts a fallible step after it: the retry must wait, like a first call would.
    await ex.declarePlan("run-retry", [
      { stepId: "notify", tool: "notify_once" },
      { stepId: "hotel", tool: "book_hotel" },
    ]);
    expect(await call(ex, "notify", "notify_once", { to: "a@example.com" }, "run-retry")).toMatchObject({
      status: "FAILED_NO_EFFECT",
      error: { code: "IRREVERSIBLE_BEFORE_FALLIBLE" },
    });
    expect(sends).toBe(1);
  });

  it("plan policy: irreversible steps wait for later fallible ones; read-only later steps and unplanned steps do not block", async () => {
    const lookup = defineTool({ name: "lookup_trip", kind: "read_only", timeoutMs: 500, invoke: async () => ({}) });
    const ex = createExecutor({ store, tools: [...tripTools(services), lookup], reserveMs: 100, minCallBudgetMs: 100 });
    await ex.declarePlan("run-1", [
      { stepId: "email", tool: "send_itinerary" },
      { stepId: "look", tool: "lookup_trip" },
    ]);
    expect(await call(ex, "email", "send_itinerary", EMAIL)).toMatchObject({ status: "SUCCEEDED" });

    await ex.declarePlan("run-2", [
      { stepId: "email", tool: "send_itinerary" },
      { stepId: "later", tool: "not_in_catalog" }, // unknown tools count as fallible
    ]);
    expect(await call(ex, "email", "send_itinerary", EMAIL, "run-2")).toMatchObject({
      status: "FAILED_NO_EFFECT",
      error: { code: "IRREVERSIBLE_BEFORE_FALLIBLE" },
    });
    expect(await call(ex, "unplanned", "send_itinerary", EMAIL, "run-2")).toMatchObject({ status: "SUCCEEDED" });
    expect(services.posts.mail).toBe(2);

    await expect(ex.declarePlan("run-3", [])).rejects.toThrow(/steps must be a non-empty array/);
    await expect(
      ex.declarePlan("run-3", [
        { stepId: "a", tool: "book_hotel" },
        { stepId: "a", tool: "book_flight" },
      ]),
    ).rejects.toThrow(/appears twice/);
  });
});
