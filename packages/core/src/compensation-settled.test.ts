/**
 * A compensation that settles after its abort tells its original (compensation-settled.ts). The chaos
 * campaign's finding (issue 21 run, seed 24): an abort's cancellation ended UNKNOWN, a person later
 * declared it "no effect", and the aborted run's booking stood with nothing in the human queue.
 */
import { startTripServices, type TripServices, tripTools } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Deadline } from "./deadline.ts";
import { createExecutor, type Executor } from "./executor.ts";
import { MemoryIntentStore } from "./memory-intent-store.ts";

const HOTEL = { hotel_id: "H-1", guest_ref: "G-1", check_in: "2026-07-01", nights: 2 };
const actor = { keyId: "key-ana", name: "ana" };

describe("a compensation settled after its abort (sweeper, person) tells its original", () => {
  let services: TripServices;
  let store: MemoryIntentStore;
  let ex: Executor;

  beforeEach(async () => {
    services = await startTripServices();
    store = new MemoryIntentStore();
    ex = createExecutor({
      store,
      tools: tripTools(services),
      probe: { spacingMs: 0, timeoutMs: 500 },
      reserveMs: 100,
      minCallBudgetMs: 100,
    });
  });
  afterEach(async () => {
    await services.close();
  });

  /** A booking, then an abort whose cancellation ends UNKNOWN (reset before any answer, probes down). */
  async function abortWithUnknownCancellation() {
    const booking = await ex.call({
      runId: "run-1",
      stepId: "hotel",
      tool: "book_hotel",
      args: HOTEL,
      deadline: Deadline.after(5000),
    });
    expect(booking.status).toBe("SUCCEEDED");
    services.fault("hotelCancellations", { commit: false, answer: "reset" });
    services.probesFail.hotelCancellations = true;
    const report = await ex.abortRun("run-1", Deadline.after(5000));
    expect(report.steps[0]).toMatchObject({ outcome: "compensation_unknown" });
    const cancelKey = report.steps[0]?.compensation?.idempotency_key ?? "";
    const cancel = await store.get(cancelKey);
    expect(cancel?.status).toBe("UNKNOWN");
    return { bookingKey: booking.idempotency_key, cancel: cancel! };
  }

  it("a person's 'no effect' on the cancellation puts the booking in the human queue (COMPENSATION_FAILED)", async () => {
    const { bookingKey, cancel } = await abortWithUnknownCancellation();
    await ex.resolve({
      key: cancel.key,
      action: "confirm_no_effect",
      note: "no cancellation at the hotel",
      expectedVersion: cancel.version,
      operatorActionId: "op-no-effect-1",
      actor,
    });
    const booking = await store.get(bookingKey);
    expect(services.effects.hotelCancellations).toHaveLength(0);
    expect(booking).toMatchObject({
      status: "SUCCEEDED",
      needsHuman: true,
      error: { code: "COMPENSATION_FAILED" },
      compensation: { key: cancel.key, status: "FAILED_NO_EFFECT" },
    });
    expect((await store.listEvents(bookingKey)).map((e) => e.type)).toContain("needs_human");
  });

  it("a person's 'effect' on the cancellation notes the reversal on the booking (nothing for a person)", async () => {
    const { bookingKey, cancel } = await abortWithUnknownCancellation();
    await ex.resolve({
      key: cancel.key,
      action: "confirm_effect",
      note: "the hotel shows it cancelled",
      expectedVersion: cancel.version,
      operatorActionId: "op-effect-1",
      actor,
    });
    expect(await store.get(bookingKey)).toMatchObject({
      status: "SUCCEEDED",
      needsHuman: false,
      compensation: { key: cancel.key, status: "SUCCEEDED" },
    });
  });

  it("a cancellation the sweeper's reconciliation settles (absent, resent with its key) notes the reversal on the booking", async () => {
    const { bookingKey, cancel } = await abortWithUnknownCancellation();
    services.probesFail.hotelCancellations = false;
    const settled = await ex.reconcileKey(cancel.key, Deadline.after(5000), "sweeper");
    expect(settled.status).toBe("SUCCEEDED");
    expect(services.effects.hotelCancellations).toHaveLength(1);
    expect(await store.get(bookingKey)).toMatchObject({
      status: "SUCCEEDED",
      needsHuman: false,
      compensation: { key: cancel.key, status: "SUCCEEDED" },
    });
  });
});
