/**
 * Attack on c914c56 (compensation-settled.ts) on real PostgreSQL: an abort's cancellation ends
 * UNKNOWN, a person declares it "no effect" (the booking goes to the human queue, COMPENSATION_FAILED),
 * then an operator runs `compensate` on the booking — twice — and the sweeper's undo pass runs.
 *
 * What must hold: the booking is cancelled exactly once at the hotel, its queue entry is settled, its
 * note names the cancellation that did it (SUCCEEDED), and nothing runs it again.
 */
import { randomUUID } from "node:crypto";
import { createExecutor, Deadline } from "@tristate/core";
import { startTripServices, tripTools } from "@tristate/testing";
import { afterEach, describe, expect, it } from "vitest";
import { Cleanup } from "./helpers.ts";
import { freshStores } from "./reconciliation-timing.support.ts";

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

const HOTEL = { hotel_id: "H-1", guest_ref: "G-1", check_in: "2026-07-01", nights: 2 };
const actor = { keyId: "key-ana", name: "ana" };

describe("attack 21: compensate again after a cancellation declared 'no effect'", () => {
  it("the booking is cancelled once, its queue entry settled, and a second compensate replays", async () => {
    const { store, ops } = await freshStores(cleanup);
    const services = cleanup.add(await startTripServices(), (s) => s.close());
    const ex = createExecutor({ store, tools: tripTools(services), probe: { spacingMs: 0, timeoutMs: 500 } });
    const booking = await ex.call({
      runId: "run-1",
      stepId: "hotel",
      tool: "book_hotel",
      args: HOTEL,
      deadline: Deadline.after(10_000),
    });
    expect(booking.status).toBe("SUCCEEDED");
    const ref = String((booking.result as { booking_ref: string }).booking_ref);

    services.fault("hotelCancellations", { commit: false, answer: "reset" });
    services.probesFail.hotelCancellations = true;
    const report = await ex.abortRun("run-1", Deadline.after(10_000));
    expect(report.steps[0]).toMatchObject({ outcome: "compensation_unknown" });
    const cancelKey = report.steps[0]?.compensation?.idempotency_key ?? "";
    const cancel = await store.get(cancelKey);
    await ex.resolve(
      {
        key: cancelKey,
        action: "confirm_no_effect",
        note: "the hotel shows no cancellation",
        expectedVersion: cancel?.version ?? 0,
        operatorActionId: randomUUID(),
        actor,
      },
      ops,
    );
    expect(await store.get(booking.idempotency_key)).toMatchObject({
      needsHuman: true,
      error: { code: "COMPENSATION_FAILED" },
    });

    services.probesFail.hotelCancellations = false;
    const first = await ex.compensate(booking.idempotency_key, Deadline.after(10_000));
    expect(first).toMatchObject({ outcome: "compensated" });
    expect(services.hotelCancellationsOf(ref)).toBe(1);
    const second = await ex.compensate(booking.idempotency_key, Deadline.after(10_000));
    expect(second).toMatchObject({ outcome: "compensated", compensation: { replayed: true } });
    await ex.undoAbortedSteps({ graceMs: 0 });
    await ex.undosDone();

    expect(services.hotelCancellationsOf(ref), "cancelled exactly once").toBe(1);
    expect(await store.get(booking.idempotency_key)).toMatchObject({
      status: "SUCCEEDED",
      needsHuman: false,
      compensation: { key: cancelKey, status: "SUCCEEDED" },
    });
    expect((await ops.listNeedsHuman()).records.map((r) => r.key)).not.toContain(booking.idempotency_key);
  }, 30_000);
});
