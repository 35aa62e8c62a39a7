import { createExecutor, Deadline, type Executor } from "@tristate/core";
import { startTripServices, type TripServices, tripTools } from "@tristate/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OpenDatabase } from "../open-database.ts";
import { openTestFacade, outboxEvents } from "./test-support.ts";

const HOTEL = { hotel_id: "H-LIS-7", guest_ref: "G-42", check_in: "2026-07-01", nights: 3 };
const turn = () => Deadline.after(8_000);

/** The executor's own compensation paths (real trip services over loopback HTTP) raise the outbox events. */
describe("notification events from a failing compensation (real executor, real PostgreSQL)", () => {
  let facade: Awaited<ReturnType<typeof openTestFacade>>;
  let db: OpenDatabase;
  let services: TripServices;
  beforeAll(async () => {
    facade = await openTestFacade();
    db = facade.db;
    services = await startTripServices();
  });
  afterAll(async () => {
    await services?.close();
    await facade?.close();
  });
  const executor = (tenant: string, without?: string): Executor =>
    createExecutor({
      store: db.intents(tenant),
      tools: tripTools(services).filter((t) => t.name !== without),
      probe: { spacingMs: 100, timeoutMs: 500 },
      reserveMs: 200,
      minCallBudgetMs: 200,
    });

  it("a refused cancellation: compensation_failed for its record, human_queue for the booking a person must see to", async () => {
    const tenant = "s-refused";
    const ex = executor(tenant);
    const hotel = await ex.call({
      runId: "trip-1",
      stepId: "hotel",
      tool: "book_hotel",
      args: HOTEL,
      deadline: turn(),
    });
    expect(hotel.status).toBe("SUCCEEDED");
    services.fault("hotelCancellations", { commit: false, answer: 423 });
    await ex.abortRun("trip-1", turn());
    await ex.outcomesWritten();
    const events = await outboxEvents(facade.pool, tenant);
    expect(events.map((e) => [e.kind, e.subject.tool]).sort()).toEqual([
      ["compensation_failed", "cancel_hotel"],
      ["human_queue", "book_hotel"],
    ]);
    const failed = events.find((e) => e.kind === "compensation_failed")!;
    expect(failed.subject).toMatchObject({ compensatedKey: hotel.idempotency_key, status: "FAILED_NO_EFFECT" });
    expect(events.find((e) => e.kind === "human_queue")!.subject).toMatchObject({ code: "COMPENSATION_FAILED" });
  });

  it("a compensation refused before its record (tool not in the catalog): one compensation_failed, from the booking", async () => {
    const tenant = "s-nocatalog";
    const hotel = await executor(tenant).call({
      runId: "trip-2",
      stepId: "hotel",
      tool: "book_hotel",
      args: HOTEL,
      deadline: turn(),
    });
    const ex = executor(tenant, "cancel_hotel");
    await ex.abortRun("trip-2", turn());
    await ex.outcomesWritten();
    const events = await outboxEvents(facade.pool, tenant);
    expect(events.map((e) => e.kind)).toEqual(["compensation_failed"]);
    expect(events[0]!.subject).toMatchObject({
      key: hotel.idempotency_key,
      tool: "book_hotel",
      code: "COMPENSATION_FAILED",
      compensatedKey: hotel.idempotency_key,
    });
  });
});
