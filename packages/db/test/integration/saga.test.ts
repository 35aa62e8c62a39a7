/**
 * Compensation and sagas (issue 4) on the real PostgreSQL through PrismaIntentStore, against fake
 * trip services over real loopback HTTP: the source design's trip (hotel booked, flight failed, trip
 * off → the hotel is cancelled once, the flight untouched), timeouts after commit on the booking and
 * on the cancellation, a process killed between "hotel confirmed" and "cancel sent", repeated aborts,
 * rule 6 (never compensate an UNKNOWN), irreversible steps last, confirmation tokens, and an
 * operator's `compensate`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  type AbortReport,
  createConfirmationTokens,
  createExecutor,
  Deadline,
  type Envelope,
  type Executor,
  type ExecutorOptions,
  type IntentRecord,
  isOperatorActionError,
  shownRecord,
} from "@tristate/core";
import { startTripServices, type TripServices, type TripToolOverrides, tripTools } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createPrismaIntentStore,
  createTestDatabase,
  PrismaOperatorStore,
  type TestDatabase,
} from "../../src/index.ts";
import type { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import type { SagaChildConfig } from "../fixtures/saga-child.ts";
import { Cleanup, sleepPast } from "./helpers.ts";

const DB_PACKAGE_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const SAGA_CHILD = join(DB_PACKAGE_DIR, "test", "fixtures", "saga-child.ts");

const HOTEL = { hotel_id: "H-LIS-7", guest_ref: "G-42", check_in: "2026-07-01", nights: 3 };
const FLIGHT = { flight_no: "TP1234", passenger_ref: "G-42" };
const EMAIL = { to: "guest42@example.com", trip_ref: "TRIP-42" };
const TRIP_PLAN = [
  { stepId: "hotel", tool: "book_hotel" },
  { stepId: "email", tool: "send_itinerary" },
  { stepId: "flight", tool: "book_flight" },
];
const ACTOR = { keyId: "key-ana", name: "ana" };

const turn = () => Deadline.after(8_000);
const outcomes = (report: AbortReport) => report.steps.map((s) => [s.stepId, s.outcome]);

describe("sagas: abort, compensation, irreversible steps and confirmations (real PostgreSQL, fake trip services)", () => {
  const cleanup = new Cleanup();
  let db: TestDatabase;
  let services: TripServices;
  let store: PrismaIntentStore;
  let runSeq = 0;
  let runId: string;

  beforeEach(async () => {
    db = cleanup.add(await createTestDatabase(), (d) => d.drop());
    services = cleanup.add(await startTripServices(), (s) => s.close());
    store = cleanup.add(createPrismaIntentStore({ databaseUrl: db.url, poolSize: 4 }), (s) => s.close());
    runId = `run-trip-${++runSeq}`;
  });
  afterEach(() => cleanup.run());

  function executor(overrides: TripToolOverrides = {}, options: Partial<ExecutorOptions> = {}): Executor {
    return createExecutor({
      store,
      tools: tripTools(services, overrides),
      probe: { spacingMs: 100, timeoutMs: 500 },
      reserveMs: 200,
      minCallBudgetMs: 200,
      ...options,
    });
  }
  const bookHotel = (ex: Executor, run = runId) =>
    ex.call({ runId: run, stepId: "hotel", tool: "book_hotel", args: HOTEL, deadline: turn() });
  const bookFlight = (ex: Executor, run = runId) =>
    ex.call({ runId: run, stepId: "flight", tool: "book_flight", args: FLIGHT, deadline: turn() });
  const sendItinerary = (ex: Executor, run = runId) =>
    ex.call({ runId: run, stepId: "email", tool: "send_itinerary", args: EMAIL, deadline: turn() });

  async function record(key: string): Promise<IntentRecord> {
    const r = await store.get(key);
    expect(r, `record ${key}`).not.toBeNull();
    return r!;
  }
  const bookingRef = (env: Envelope) => (env.result as { booking_ref: string }).booking_ref;

  /** The hotel record's compensation JSON and the compensation's own intent record. */
  async function expectCompensationRecorded(hotelKey: string, bookingRefValue: string) {
    const hotel = await record(hotelKey);
    const compensation = hotel.compensation as Record<string, unknown>;
    expect(compensation).toMatchObject({
      tool: "cancel_hotel",
      kind: "compensation",
      args: { booking_ref: bookingRefValue },
      status: "SUCCEEDED",
      needsHuman: false,
      key: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    const compKey = compensation.key as string;
    expect(compKey).not.toBe(hotelKey);
    const comp = await record(compKey);
    expect(comp).toMatchObject({
      runId: hotel.runId,
      stepId: `compensate:${hotelKey}`,
      tool: "cancel_hotel",
      args: { booking_ref: bookingRefValue },
      status: "SUCCEEDED",
      needsHuman: false,
    });
    // The cancellation reached the service with the compensation's own key.
    expect(services.effects.hotelCancellations.map((e) => e.clientRef)).toEqual([compKey]);
    return { hotel, comp, compKey };
  }

  it("the source design's trip: hotel booked, flight failed (no seats) → abort cancels the hotel once, the flight is untouched", async () => {
    const ex = executor();
    const hotel = await bookHotel(ex);
    expect(hotel).toMatchObject({ status: "SUCCEEDED", result: { status: "confirmed", hotel_id: HOTEL.hotel_id } });
    const ref = bookingRef(hotel);
    // The compensation is registered on the record and filled from the result on confirmation.
    expect((await record(hotel.idempotency_key)).compensation).toMatchObject({
      tool: "cancel_hotel",
      kind: "compensation",
      args: { booking_ref: ref },
    });

    services.flightNoSeats = true;
    const flight = await bookFlight(ex);
    expect(flight).toMatchObject({
      status: "FAILED_NO_EFFECT",
      retry_safe: true,
      error: { code: "REJECTED", httpStatus: 422 },
    });

    const report = await ex.abortRun(runId, turn());
    expect(outcomes(report)).toEqual([
      ["flight", "no_effect"],
      ["hotel", "compensated"],
    ]);
    expect(report).toMatchObject({ runId, complete: true, needsHuman: 0 });
    expect(report.summary).toContain("1 effect(s) reversed");
    expect(report.summary).toContain("1 step(s) had no effect");
    expect(report.steps[0]!.compensation).toBeUndefined();
    const hotelStep = report.steps[1]!;
    expect(hotelStep).toMatchObject({ tool: "book_hotel", key: hotel.idempotency_key, status: "SUCCEEDED" });
    expect(hotelStep.compensation).toMatchObject({ status: "SUCCEEDED", replayed: false, attempt: 1 });

    // The remote: the hotel cancelled exactly once; the flight untouched.
    expect(services.hotelCancellationsOf(ref)).toBe(1);
    expect(services.posts.hotelCancellations).toBe(1);
    expect(services.hotelBookings.get(ref)).toMatchObject({ status: "cancelled" });
    expect(services.posts.flightBookings).toBe(1);
    expect(services.effects.flightBookings).toHaveLength(0);
    expect(services.flightBookings.size).toBe(0);
    expect(services.posts.flightCancellations).toBe(0);

    const { compKey } = await expectCompensationRecorded(hotel.idempotency_key, ref);
    expect(hotelStep.compensation!.idempotency_key).toBe(compKey);
    const all = await store.listByRun(runId);
    expect(all.map((r) => r.tool).sort()).toEqual(["book_flight", "book_hotel", "cancel_hotel"]);
    expect(all.some((r) => r.tool === "cancel_flight")).toBe(false);
    const events = (await store.listEvents(hotel.idempotency_key)).filter((e) => e.type === "compensation");
    expect(events.map((e) => e.data)).toEqual([
      { tool: "cancel_hotel", key: compKey, status: "SUCCEEDED", kind: "compensation" },
    ]);
  });

  describe("the hotel booking times out after the service committed it", () => {
    it("the call's own reconciliation finds it; abort then cancels it once", async () => {
      const ex = executor({ book_hotel: { timeoutMs: 300 } });
      services.fault("hotelBookings", { answer: "hang" });
      const hotel = await bookHotel(ex);
      expect(hotel).toMatchObject({ status: "SUCCEEDED", resolution: "found", attempt: 1 });
      const ref = bookingRef(hotel);

      const report = await ex.abortRun(runId, turn());
      expect(outcomes(report)).toEqual([["hotel", "compensated"]]);
      expect(services.posts.hotelBookings).toBe(1);
      expect(services.hotelCancellationsOf(ref)).toBe(1);
      expect(services.posts.hotelCancellations).toBe(1);
      await expectCompensationRecorded(hotel.idempotency_key, ref);
    });

    it("the call ends UNKNOWN (probes down meanwhile): abort reconciles first (probe finds it), then cancels once", async () => {
      const ex = executor({ book_hotel: { timeoutMs: 300 } });
      services.fault("hotelBookings", { answer: "hang" });
      services.probesFail.hotelBookings = true;
      const hotel = await bookHotel(ex);
      expect(hotel).toMatchObject({ status: "UNKNOWN", retry_safe: false });
      const before = await record(hotel.idempotency_key);
      expect(before).toMatchObject({ status: "UNKNOWN", needsHuman: false });
      // Registered before the call: the tool and kind; its arguments wait for the confirmed result.
      expect(before.compensation).toEqual({ tool: "cancel_hotel", kind: "compensation", args: null });
      expect(services.effects.hotelBookings).toHaveLength(1);
      const ref = services.effects.hotelBookings[0]!.view.booking_ref as string;
      expect(services.posts.hotelCancellations).toBe(0);

      services.probesFail.hotelBookings = false;
      const report = await ex.abortRun(runId, turn());
      expect(outcomes(report)).toEqual([["hotel", "compensated"]]);
      expect(report.steps[0]!.status).toBe("SUCCEEDED");
      expect(report.complete).toBe(true);

      const after = await record(hotel.idempotency_key);
      expect(after).toMatchObject({ status: "SUCCEEDED", resolution: "found", attempt: 1 });
      // Reconciled first: the found probe precedes the compensation in the timeline.
      const types = (await store.listEvents(hotel.idempotency_key)).map((e) => e.type);
      expect(types.lastIndexOf("probe")).toBeLessThan(types.indexOf("compensation"));
      expect(services.posts.hotelBookings).toBe(1); // never resent
      expect(services.hotelCancellationsOf(ref)).toBe(1);
      expect(services.posts.hotelCancellations).toBe(1);
      await expectCompensationRecorded(hotel.idempotency_key, ref);
    });
  });

  describe("the cancellation itself times out after the service committed it", () => {
    it("the compensation is reconciled (its probe finds the cancellation), never re-cancelled; abort again → still one", async () => {
      const ex = executor({ cancel_hotel: { timeoutMs: 300 } });
      const hotel = await bookHotel(ex);
      const ref = bookingRef(hotel);
      services.fault("hotelCancellations", { answer: "hang" });

      const first = await ex.abortRun(runId, turn());
      expect(outcomes(first)).toEqual([["hotel", "compensated"]]);
      expect(first.steps[0]!.compensation).toMatchObject({ status: "SUCCEEDED", resolution: "found", attempt: 1 });
      expect(services.hotelCancellationsOf(ref)).toBe(1);
      expect(services.posts.hotelCancellations).toBe(1);
      const { comp } = await expectCompensationRecorded(hotel.idempotency_key, ref);
      expect(comp).toMatchObject({ resolution: "found", attempt: 1 });

      const second = await ex.abortRun(runId, turn());
      expect(outcomes(second)).toEqual([["hotel", "compensated"]]);
      expect(second.steps[0]!.compensation).toMatchObject({ status: "SUCCEEDED", replayed: true });
      expect(services.hotelCancellationsOf(ref)).toBe(1);
      expect(services.posts.hotelCancellations).toBe(1);
    });

    it("with its probe down too, the compensation stays UNKNOWN (not re-cancelled); the next abort reconciles it", async () => {
      const ex = executor({ cancel_hotel: { timeoutMs: 300 } });
      const hotel = await bookHotel(ex);
      const ref = bookingRef(hotel);
      services.fault("hotelCancellations", { answer: "hang" });
      services.probesFail.hotelCancellations = true;

      const first = await ex.abortRun(runId, turn());
      expect(outcomes(first)).toEqual([["hotel", "compensation_unknown"]]);
      expect(first).toMatchObject({ complete: false, needsHuman: 1 });
      expect((await record(hotel.idempotency_key)).compensation).toMatchObject({
        status: "UNKNOWN",
        needsHuman: true,
      });
      expect(services.posts.hotelCancellations).toBe(1);

      services.probesFail.hotelCancellations = false;
      const second = await ex.abortRun(runId, turn());
      expect(outcomes(second)).toEqual([["hotel", "compensated"]]);
      expect(second.steps[0]!.compensation).toMatchObject({ status: "SUCCEEDED", resolution: "found" });
      expect(second.complete).toBe(true);
      expect(services.hotelCancellationsOf(ref)).toBe(1);
      expect(services.posts.hotelCancellations).toBe(1);
      await expectCompensationRecorded(hotel.idempotency_key, ref);
    });
  });

  it("a process killed between 'hotel confirmed' and 'cancel sent' → restart → abort completes with one cancellation", async () => {
    const leaseMs = 2500;
    const child = cleanup.add(
      runSagaChild({ databaseUrl: db.url, servicesUrl: services.url, runId, args: HOTEL, leaseMs }),
      (c) => c.kill(),
    );
    const exit = await child.exited;
    expect(exit, child.stderr()).toEqual({ code: null, signal: "SIGKILL" });
    expect(child.stderr()).toContain("SIGKILL after the cancel_hotel claim");
    expect(child.lines.map((l) => l.type)).toEqual(["booked"]);
    const booked = (child.lines[0] as { envelope: Envelope }).envelope;
    expect(booked).toMatchObject({ status: "SUCCEEDED" });
    const ref = bookingRef(booked);

    // What the dead process left: the hotel confirmed, the cancellation claimed (PENDING), nothing sent.
    expect(services.posts.hotelCancellations).toBe(0);
    const records = await store.listByRun(runId);
    expect(records.map((r) => [r.tool, r.status])).toEqual([
      ["book_hotel", "SUCCEEDED"],
      ["cancel_hotel", "PENDING"],
    ]);
    const orphan = records[1]!;
    expect(orphan.stepId).toBe(`compensate:${booked.idempotency_key}`);

    // The restarted executor: while the dead call's lease runs, the compensation is in flight (rule 2).
    const ex = executor();
    expect(Date.now()).toBeLessThan(orphan.leaseUntilEpochMs);
    const early = await ex.abortRun(runId, turn());
    // In flight (issue 9 §7): not a compensation waiting for an operator.
    expect(outcomes(early)).toEqual([["hotel", "in_flight"]]);
    expect(early.complete).toBe(false);
    expect(early.steps[0]!.compensation).toMatchObject({ status: "UNKNOWN", error: { code: "IN_FLIGHT" } });
    expect(services.posts.hotelCancellations).toBe(0);
    expect(await record(orphan.key)).toMatchObject({ status: "PENDING", version: orphan.version });

    await sleepPast(orphan.leaseUntilEpochMs);
    const report = await ex.abortRun(runId, turn());
    expect(outcomes(report)).toEqual([["hotel", "compensated"]]);
    expect(report.complete).toBe(true);
    expect(report.steps[0]!.compensation).toMatchObject({
      status: "SUCCEEDED",
      idempotency_key: orphan.key,
      resolution: "absent_resent",
      attempt: 2,
    });
    expect(services.hotelCancellationsOf(ref)).toBe(1);
    expect(services.posts.hotelCancellations).toBe(1);
    await expectCompensationRecorded(booked.idempotency_key, ref);

    const again = await ex.abortRun(runId, turn());
    expect(outcomes(again)).toEqual([["hotel", "compensated"]]);
    expect(services.posts.hotelCancellations).toBe(1);
  });

  it("abort twice → one cancellation; the second report's compensation envelope is replayed", async () => {
    const ex = executor();
    const hotel = await bookHotel(ex);
    const ref = bookingRef(hotel);
    const first = await ex.abortRun(runId, turn());
    const second = await ex.abortRun(runId, turn());
    expect(outcomes(first)).toEqual([["hotel", "compensated"]]);
    expect(outcomes(second)).toEqual([["hotel", "compensated"]]);
    expect(first.steps[0]!.compensation).toMatchObject({ status: "SUCCEEDED", replayed: false });
    expect(second.steps[0]!.compensation).toMatchObject({
      status: "SUCCEEDED",
      replayed: true,
      idempotency_key: first.steps[0]!.compensation!.idempotency_key,
    });
    expect(second.steps[0]!.message).toContain("already done earlier");
    expect(second.complete).toBe(true);
    expect(services.hotelCancellationsOf(ref)).toBe(1);
    expect(services.posts.hotelCancellations).toBe(1);
    expect(await store.listByRun(runId)).toHaveLength(2);
  });

  it("an UNKNOWN with no probe is never compensated and waits in the human queue (rule 6)", async () => {
    const ex = executor({ book_hotel: { kind: "unsafe", probe: undefined } });
    services.fault("hotelBookings", { answer: "reset" }); // committed, then the connection dies
    const hotel = await bookHotel(ex);
    expect(hotel).toMatchObject({ status: "UNKNOWN", retry_safe: false, resolution: "needs_human" });

    const report = await ex.abortRun(runId, turn());
    expect(outcomes(report)).toEqual([["hotel", "not_confirmed"]]);
    expect(report).toMatchObject({ complete: false, needsHuman: 1 });
    expect(report.steps[0]!.compensation).toBeUndefined();
    expect(report.summary).toContain("1 step(s) wait for an operator");

    expect(services.effects.hotelBookings).toHaveLength(1); // it did happen, but nobody can know it
    expect(services.posts.hotelBookings).toBe(1);
    expect(services.posts.hotelCancellations).toBe(0);
    expect(shownRecord(await record(hotel.idempotency_key))).toMatchObject({
      status: "UNKNOWN",
      needsHuman: true,
      resolution: "needs_human",
      compensation: { tool: "cancel_hotel", kind: "compensation", args: null },
    });
    expect(await store.listByRun(runId)).toHaveLength(1);
    const queue = await new PrismaOperatorStore(store.prisma).listNeedsHuman();
    expect(queue.records.map((r) => r.key)).toEqual([hotel.idempotency_key]);
  });

  describe("a compensation that fails goes to the human queue", () => {
    const queueKeys = async () =>
      (await new PrismaOperatorStore(store.prisma).listNeedsHuman()).records.map((r) => [r.tool, r.status]);

    it("the cancellation is refused (4xx): compensation_failed, in the queue; a later abort retries it once", async () => {
      const ex = executor();
      const hotel = await bookHotel(ex);
      const ref = bookingRef(hotel);
      services.fault("hotelCancellations", { commit: false, answer: 423 });
      const first = await ex.abortRun(runId, turn());
      expect(outcomes(first)).toEqual([["hotel", "compensation_failed"]]);
      expect(first).toMatchObject({ complete: false, needsHuman: 1 });
      expect(first.steps[0]!.compensation).toMatchObject({ status: "FAILED_NO_EFFECT", error: { httpStatus: 423 } });
      expect(services.hotelCancellationsOf(ref)).toBe(0);
      // the original booking waits for a person (who can compensate it), not the failed cancellation
      expect(await queueKeys()).toEqual([["book_hotel", "SUCCEEDED"]]);
      expect((await record(hotel.idempotency_key)).compensation).toMatchObject({ status: "FAILED_NO_EFFECT" });

      const second = await ex.abortRun(runId, turn());
      expect(outcomes(second)).toEqual([["hotel", "compensated"]]);
      expect(second.steps[0]!.compensation).toMatchObject({ status: "SUCCEEDED", attempt: 2 });
      expect(services.hotelCancellationsOf(ref)).toBe(1);
      expect(await queueKeys()).toEqual([]);
    });

    it("the compensating tool is not in the catalog (refused before any record): the original is in the queue", async () => {
      const hotel = await bookHotel(executor());
      const ex = createExecutor({
        store,
        tools: tripTools(services).filter((t) => t.name !== "cancel_hotel"),
        probe: { spacingMs: 100, timeoutMs: 500 },
        reserveMs: 200,
        minCallBudgetMs: 200,
      });
      const report = await ex.abortRun(runId, turn());
      expect(outcomes(report)).toEqual([["hotel", "compensation_failed"]]);
      expect(report.steps[0]!.compensation).toMatchObject({
        status: "FAILED_NO_EFFECT",
        error: { code: "UNKNOWN_TOOL" },
      });
      expect(services.posts.hotelCancellations).toBe(0);
      expect(await queueKeys()).toEqual([["book_hotel", "SUCCEEDED"]]);
      expect(await record(hotel.idempotency_key)).toMatchObject({
        needsHuman: true,
        error: { code: "COMPENSATION_FAILED" },
      });

      // With the catalog fixed, an abort compensates it and takes it out of the queue.
      const fixed = await executor().abortRun(runId, turn());
      expect(outcomes(fixed)).toEqual([["hotel", "compensated"]]);
      expect(services.hotelCancellationsOf(bookingRef(hotel))).toBe(1);
      expect(await queueKeys()).toEqual([]);
      expect(await record(hotel.idempotency_key)).toMatchObject({ needsHuman: false, error: null });
    });

    it("the booked tool is no longer in the catalog: the original is in the queue, nothing sent", async () => {
      const hotel = await bookHotel(executor());
      const ex = createExecutor({
        store,
        tools: tripTools(services).filter((t) => t.name !== "book_hotel"),
        reserveMs: 200,
        minCallBudgetMs: 200,
      });
      const report = await ex.abortRun(runId, turn());
      expect(outcomes(report)).toEqual([["hotel", "needs_correction"]]);
      expect(report.needsHuman).toBe(1);
      expect(services.posts.hotelCancellations).toBe(0);
      expect(await queueKeys()).toEqual([["book_hotel", "SUCCEEDED"]]);
      expect(hotel.status).toBe("SUCCEEDED");
    });
  });

  describe("irreversible steps", () => {
    it("an irreversible e-mail before a fallible step of the plan is refused; after the flight succeeded it proceeds", async () => {
      const ex = executor();
      await ex.declarePlan(runId, TRIP_PLAN);
      expect(await bookHotel(ex)).toMatchObject({ status: "SUCCEEDED" });

      const refused = await sendItinerary(ex);
      expect(refused).toMatchObject({
        status: "FAILED_NO_EFFECT",
        retry_safe: true,
        error: { code: "IRREVERSIBLE_BEFORE_FALLIBLE", field: "stepId" },
      });
      expect(refused.error!.message).toContain("flight (book_flight)");
      expect(services.posts.mail).toBe(0);
      expect((await store.listByRun(runId)).map((r) => r.stepId)).toEqual(["hotel"]);

      // A failed flight is not done either.
      services.flightNoSeats = true;
      expect(await bookFlight(ex)).toMatchObject({ status: "FAILED_NO_EFFECT" });
      expect(await sendItinerary(ex)).toMatchObject({
        status: "FAILED_NO_EFFECT",
        error: { code: "IRREVERSIBLE_BEFORE_FALLIBLE" },
      });
      expect(services.posts.mail).toBe(0);

      services.flightNoSeats = false;
      expect(await bookFlight(ex)).toMatchObject({ status: "SUCCEEDED", attempt: 2 });
      const sent = await sendItinerary(ex);
      expect(sent).toMatchObject({ status: "SUCCEEDED", result: { kind: "itinerary", to: EMAIL.to } });
      expect(services.effects.mail).toHaveLength(1);
      expect(services.effects.mail[0]!.clientRef).toBe(sent.idempotency_key);
    });

    it("abort of a run whose e-mail was sent, with a corrective: the e-mail is corrected, the bookings cancelled", async () => {
      const ex = executor();
      await ex.declarePlan(runId, TRIP_PLAN);
      const hotel = await bookHotel(ex);
      const flight = await bookFlight(ex);
      const mail = await sendItinerary(ex);
      expect([hotel.status, flight.status, mail.status]).toEqual(["SUCCEEDED", "SUCCEEDED", "SUCCEEDED"]);

      const report = await ex.abortRun(runId, turn());
      expect(outcomes(report)).toEqual([
        ["email", "corrected"],
        ["flight", "compensated"],
        ["hotel", "compensated"],
      ]);
      expect(report).toMatchObject({ complete: true, needsHuman: 0 });
      expect(report.summary).toContain("1 irreversible effect(s) followed by a correction");
      expect(services.effects.mail.map((m) => m.view.kind)).toEqual(["itinerary", "correction"]);
      const correctionKey = report.steps[0]!.compensation!.idempotency_key;
      expect(services.effects.mail[1]!.clientRef).toBe(correctionKey);
      expect(await record(correctionKey)).toMatchObject({
        stepId: `correct:${mail.idempotency_key}`,
        tool: "send_correction",
        status: "SUCCEEDED",
      });
      expect((await record(mail.idempotency_key)).compensation).toMatchObject({
        tool: "send_correction",
        kind: "corrective",
        key: correctionKey,
        status: "SUCCEEDED",
      });
      expect(services.hotelCancellationsOf(bookingRef(hotel))).toBe(1);
      expect(services.flightCancellationsOf(bookingRef(flight))).toBe(1);

      // Again: nothing is sent twice.
      const again = await ex.abortRun(runId, turn());
      expect(outcomes(again)).toEqual(outcomes(report));
      expect(services.posts.mail).toBe(2);
      expect(services.posts.hotelCancellations + services.posts.flightCancellations).toBe(2);
    });

    it("abort of a run whose e-mail was sent, without a corrective: needs_correction, in the human queue", async () => {
      const ex = executor({ send_itinerary: { corrective: undefined } });
      await ex.declarePlan(runId, TRIP_PLAN);
      await bookHotel(ex);
      await bookFlight(ex);
      const mail = await sendItinerary(ex);
      expect(mail.status).toBe("SUCCEEDED");

      const report = await ex.abortRun(runId, turn());
      expect(outcomes(report)).toEqual([
        ["email", "needs_correction"],
        ["flight", "compensated"],
        ["hotel", "compensated"],
      ]);
      expect(report).toMatchObject({ complete: false, needsHuman: 1 });
      expect(services.posts.mail).toBe(1);
      expect(await record(mail.idempotency_key)).toMatchObject({
        status: "SUCCEEDED",
        needsHuman: true,
        error: { code: "IRREVERSIBLE_NEEDS_CORRECTION" },
      });
      const queue = await new PrismaOperatorStore(store.prisma).listNeedsHuman();
      expect(queue.records.map((r) => r.key)).toEqual([mail.idempotency_key]);
    });
  });

  describe("confirmation policy (refunds over 100.00)", () => {
    const SECRET = "saga-test-secret-0123456789";
    const big = { order_id: "A-1182", amount: "150.00", currency: "EUR" };

    it("without a token nothing is sent and nothing written; a wrong, expired or foreign token is refused; a valid one proceeds", async () => {
      const tokens = createConfirmationTokens(SECRET);
      const ex = executor({}, { confirmations: tokens });
      const input = { runId, stepId: "refund", tool: "issue_refund", args: big };
      const key = ex.keyFor(input);
      const subject = ex.confirmationFor(input).subject;
      const refund = (confirmationToken?: string) =>
        ex.call({ ...input, deadline: turn(), ...(confirmationToken !== undefined ? { confirmationToken } : {}) });
      const expectRefused = async (env: Envelope) => {
        expect(env).toMatchObject({
          status: "FAILED_NO_EFFECT",
          retry_safe: true,
          idempotency_key: key,
          error: { code: "CONFIRMATION_REQUIRED", field: "confirmationToken" },
        });
        expect(env.error!.message).toContain("refunds over 100.00 need confirmation");
        expect(services.posts.refunds).toBe(0);
        expect(await store.get(key)).toBeNull();
      };

      await expectRefused(await refund());
      // A token for another amount (another key).
      await expectRefused(
        await refund(
          tokens.issue(ex.confirmationFor({ ...input, args: { ...big, amount: "120.00" } }).subject, Date.now()),
        ),
      );
      // An expired token.
      await expectRefused(await refund(tokens.issue(subject, Date.now() - 60_000, 1_000)));
      // A token made with another secret.
      const foreign = createConfirmationTokens("another-secret-0123456789").issue(subject, Date.now());
      await expectRefused(await refund(foreign));
      // An executor without a verifier refuses every call above the threshold.
      const blind = await executor().call({
        ...input,
        deadline: turn(),
        confirmationToken: tokens.issue(subject, Date.now()),
      });
      await expectRefused(blind);
      expect(await store.listByRun(runId)).toHaveLength(0);

      // Below the threshold, no token is needed.
      const small = await ex.call({
        runId,
        stepId: "refund-small",
        tool: "issue_refund",
        args: { ...big, amount: "40.00" },
        deadline: turn(),
      });
      expect(small).toMatchObject({ status: "SUCCEEDED" });
      expect(services.posts.refunds).toBe(1);

      const ok = await refund(tokens.issue(subject, Date.now()));
      expect(ok).toMatchObject({ status: "SUCCEEDED", idempotency_key: key, result: { amount: "150.00" } });
      expect(services.posts.refunds).toBe(2);
      expect(services.effects.refunds.map((e) => e.clientRef)).toContain(key);
      expect(await record(key)).toMatchObject({ status: "SUCCEEDED" });

      // A repeat replays the recorded outcome (token or not) and sends nothing.
      expect(await refund()).toMatchObject({ status: "SUCCEEDED", replayed: true });
      expect(services.posts.refunds).toBe(2);
    });
  });

  describe("operator compensate (executor.resolve with PrismaOperatorStore)", () => {
    it("on a confirmed booking: one cancellation and an audit row; a repeated action id replays", async () => {
      const ex = executor();
      const ops = new PrismaOperatorStore(store.prisma);
      const hotel = await bookHotel(ex);
      const ref = bookingRef(hotel);
      const before = await record(hotel.idempotency_key);
      const input = {
        key: hotel.idempotency_key,
        action: "compensate" as const,
        note: "the guest cancelled the trip by phone",
        expectedVersion: before.version,
        operatorActionId: randomUUID(),
        actor: ACTOR,
      };
      const result = await ex.resolve(input, ops);
      expect(result.replayed).toBe(false);
      expect(result.envelope).toMatchObject({ status: "SUCCEEDED" });
      expect(result.warnings).toEqual([]);
      expect(services.hotelCancellationsOf(ref)).toBe(1);
      expect(services.posts.hotelCancellations).toBe(1);
      const audit = await ops.findAudit(input.operatorActionId);
      expect(audit).toMatchObject({
        action: "compensate",
        key: hotel.idempotency_key,
        actorName: "ana",
        actorKeyId: "key-ana",
        note: input.note,
        tool: "book_hotel",
      });
      const { compKey } = await expectCompensationRecorded(hotel.idempotency_key, ref);
      expect(result.envelope.idempotency_key).toBe(compKey);
      const types = (await store.listEvents(hotel.idempotency_key)).map((e) => e.type);
      expect(types).toContain("human_action");

      const repeat = await ex.resolve(input, ops);
      expect(repeat.replayed).toBe(true);
      expect(services.posts.hotelCancellations).toBe(1);
      // An abort afterwards replays the same compensation.
      const report = await ex.abortRun(runId, turn());
      expect(outcomes(report)).toEqual([["hotel", "compensated"]]);
      expect(report.steps[0]!.compensation).toMatchObject({ replayed: true, idempotency_key: compKey });
      expect(services.posts.hotelCancellations).toBe(1);
    });

    it("on an UNKNOWN: refused (rule 6), nothing sent, nothing audited", async () => {
      const ex = executor({ book_hotel: { timeoutMs: 300 } });
      const ops = new PrismaOperatorStore(store.prisma);
      services.fault("hotelBookings", { answer: "hang" });
      services.probesFail.hotelBookings = true;
      const hotel = await bookHotel(ex);
      expect(hotel.status).toBe("UNKNOWN");
      const before = await record(hotel.idempotency_key);
      const operatorActionId = randomUUID();
      const error = await ex
        .resolve(
          {
            key: hotel.idempotency_key,
            action: "compensate",
            note: "undo it",
            expectedVersion: before.version,
            operatorActionId,
            actor: ACTOR,
          },
          ops,
        )
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(isOperatorActionError(error), String(error)).toBe(true);
      expect(error).toMatchObject({ code: "NOT_ALLOWED", field: "action" });
      expect((error as Error).message).toContain("rule 6");
      expect(services.posts.hotelCancellations).toBe(0);
      expect(await ops.findAudit(operatorActionId)).toBeNull();
      expect(await record(hotel.idempotency_key)).toEqual(before);
    });
  });
});

// ---------------------------------------------------------------------------------------------

type SagaChildLine =
  | { type: "booked"; envelope: Envelope }
  | { type: "report"; report: AbortReport }
  | { type: "error"; message: string };

interface SagaChild {
  readonly process: ChildProcess;
  readonly lines: SagaChildLine[];
  stderr(): string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(): Promise<void>;
}

/** Starts `node --import tsx test/fixtures/saga-child.ts <config>` in `packages/db`. */
function runSagaChild(config: SagaChildConfig): SagaChild {
  const proc = spawn(process.execPath, ["--import", "tsx", SAGA_CHILD, JSON.stringify(config)], {
    cwd: DB_PACKAGE_DIR,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, NODE_OPTIONS: "" },
  });
  const lines: SagaChildLine[] = [];
  let stdout = "";
  let stderr = "";
  proc.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    let nl = stdout.indexOf("\n");
    while (nl >= 0) {
      const text = stdout.slice(0, nl);
      stdout = stdout.slice(nl + 1);
      try {
        lines.push(JSON.parse(text) as SagaChildLine);
      } catch {
        stderr += `[stdout] ${text}\n`;
      }
      nl = stdout.indexOf("\n");
    }
  });
  proc.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.once("close", (code, signal) => resolve({ code, signal }));
  });
  return {
    process: proc,
    lines,
    stderr: () =>
      lines
        .filter((l): l is Extract<SagaChildLine, { type: "error" }> => l.type === "error")
        .map((l) => `[error] ${l.message}\n`)
        .join("") + stderr,
    exited,
    async kill() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill("SIGKILL");
        await exited;
      }
    },
  };
}
