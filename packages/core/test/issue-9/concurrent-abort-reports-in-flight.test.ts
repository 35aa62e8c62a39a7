/**
 * Issue 9 §7c: two concurrent `abortRun` calls on one run. The booking is confirmed and its
 * compensation (the cancellation) takes a while at the remote. Exactly one cancellation reaches the
 * remote; the abort that finds it running reports the step `in_flight` (abort again later) — not
 * `compensation_unknown`, not waiting for an operator; once both are done, an abort reports it
 * `compensated` from the log.
 */

import { startTripServices, type TripServices, tripTools } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isCompensationStep } from "../../src/compensation.ts";
import { Deadline } from "../../src/deadline.ts";
import { createExecutor, type Executor } from "../../src/executor.ts";
import { MemoryIntentStore } from "../../src/memory-intent-store.ts";
import type { AbortReport } from "../../src/saga.ts";
import { waitFor } from "./support.ts";

const HOTEL = { hotel_id: "H-1", guest_ref: "G-1", check_in: "2026-07-01", nights: 2 };
const CANCEL_TAKES_MS = 300;
const turn = () => Deadline.after(5_000);

let services: TripServices;
let store: MemoryIntentStore;

beforeEach(async () => {
  services = await startTripServices();
  store = new MemoryIntentStore();
});
afterEach(async () => {
  await services.close();
});

function executor(): Executor {
  return createExecutor({
    store,
    tools: tripTools(services),
    probe: { spacingMs: 10, timeoutMs: 500 },
    reserveMs: 100,
    minCallBudgetMs: 100,
  });
}

/** A run whose hotel booking is confirmed; its cancellation will take {@link CANCEL_TAKES_MS}. */
async function bookedRun(ex: Executor): Promise<{ key: string; bookingRef: string }> {
  const booked = await ex.call({
    runId: "run-7c",
    stepId: "hotel",
    tool: "book_hotel",
    args: HOTEL,
    deadline: turn(),
  });
  expect(booked).toMatchObject({ status: "SUCCEEDED" });
  services.fault("hotelCancellations", { respondDelayMs: CANCEL_TAKES_MS });
  return { key: booked.idempotency_key, bookingRef: String((booked.result as { booking_ref: string }).booking_ref) };
}

function onlyStep(report: AbortReport) {
  expect(report.steps).toHaveLength(1);
  return report.steps[0]!;
}

async function expectOriginalNotQueued(key: string): Promise<void> {
  const original = await store.get(key);
  expect(original).toMatchObject({ status: "SUCCEEDED", needsHuman: false });
  expect((await store.listEvents(key)).filter((e) => e.type === "needs_human")).toEqual([]);
  for (const r of await store.listByRun("run-7c")) expect(r.needsHuman).toBe(false);
}

describe("issue 9 §7c: a second concurrent abortRun reports the compensation in flight", () => {
  it("the second abort starts while the cancellation is at the remote → in_flight, complete: false; one cancellation; a third abort → compensated", async () => {
    const ex = executor();
    const { key, bookingRef } = await bookedRun(ex);

    const first = ex.abortRun("run-7c", turn());
    await waitFor(() => services.posts.hotelCancellations === 1); // the cancellation is being worked on
    const second = await ex.abortRun("run-7c", turn());
    expect(services.posts.hotelCancellations).toBe(1); // the second abort sent nothing

    const secondStep = onlyStep(second);
    expect(secondStep).toMatchObject({ stepId: "hotel", key, status: "SUCCEEDED", outcome: "in_flight" });
    expect(secondStep.outcome).not.toBe("compensation_unknown");
    expect(secondStep.compensation?.status).toBe("UNKNOWN");
    expect(second).toMatchObject({ complete: false, needsHuman: 0 });
    expect(second.summary).not.toMatch(/wait for an operator/);

    const firstReport = await first;
    expect(onlyStep(firstReport)).toMatchObject({ outcome: "compensated" });
    expect(firstReport).toMatchObject({ complete: true, needsHuman: 0 });

    const third = await ex.abortRun("run-7c", turn());
    expect(onlyStep(third)).toMatchObject({ outcome: "compensated", compensation: { replayed: true } });
    expect(third).toMatchObject({ complete: true, needsHuman: 0 });

    expect(services.posts.hotelCancellations).toBe(1);
    expect(services.hotelCancellationsOf(bookingRef)).toBe(1);
    expect(services.hotelBookings.get(bookingRef)?.status).toBe("cancelled");
    await expectOriginalNotQueued(key);
    const compensations = (await store.listByRun("run-7c")).filter((r) => isCompensationStep(r.stepId));
    expect(compensations).toHaveLength(1);
    expect(compensations[0]).toMatchObject({ status: "SUCCEEDED", attempt: 1 });
  });

  it("two aborts started in the same tick: one compensates, the other reports in_flight; one cancellation", async () => {
    const ex = executor();
    const { key, bookingRef } = await bookedRun(ex);

    const reports = await Promise.all([ex.abortRun("run-7c", turn()), ex.abortRun("run-7c", turn())]);
    const outcomes = reports.map((r) => onlyStep(r).outcome).sort();
    expect(outcomes).toEqual(["compensated", "in_flight"]);
    const inFlight = reports.find((r) => onlyStep(r).outcome === "in_flight")!;
    expect(inFlight).toMatchObject({ complete: false, needsHuman: 0 });
    expect(reports.find((r) => onlyStep(r).outcome === "compensated")).toMatchObject({ complete: true });

    expect(services.posts.hotelCancellations).toBe(1);
    expect(services.hotelCancellationsOf(bookingRef)).toBe(1);
    await expectOriginalNotQueued(key);

    const again = await ex.abortRun("run-7c", turn());
    expect(onlyStep(again).outcome).toBe("compensated");
    expect(again.complete).toBe(true);
    expect(services.posts.hotelCancellations).toBe(1);
  });
});
