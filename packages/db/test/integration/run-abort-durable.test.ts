/**
 * Issue 20 §1, DESIGN.md rule 13 — an abort is a durable state of the run — on real PostgreSQL with
 * the fake trip services over loopback HTTP. The effects are counted at the remote; what the agent
 * (envelopes) and the operator (the abort report, `getRun`/`listRuns`, the reads behind `runs.get` and
 * `runs.list`) were told is asserted. Interleavings are forced with gates in the store (a claim or an
 * outcome write held until the abort has answered), never with timed assertions.
 */
import { randomUUID } from "node:crypto";
import {
  createExecutor,
  Deadline,
  type Executor,
  type ExecutorOptions,
  type IntentStore,
  type RunAbortInput,
  sweepStale,
} from "@tristate/core";
import { startTripServices, type TripServices, type TripToolOverrides, tripTools } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createPrismaIntentStore,
  createTestDatabase,
  getRun,
  listRuns,
  PrismaOperatorStore,
  type TestDatabase,
} from "../../src/index.ts";
import type { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { Cleanup, waitUntil } from "./helpers.ts";

const HOTEL = { hotel_id: "H-LIS-7", guest_ref: "G-42", check_in: "2026-07-01", nights: 3 };
const FLIGHT = { flight_no: "TP1234", passenger_ref: "G-42" };
const AGENT: RunAbortInput = {
  actorKeyId: "key-agent",
  actorName: "trip-agent",
  via: "agent",
  reason: "user cancelled",
};
const OPS: RunAbortInput = { actorKeyId: "key-ops", actorName: "ana", via: "operator", reason: "fraud suspected" };
const turn = () => Deadline.after(8_000);

/** A promise the test resolves: holds a store call until the test lets it go. */
function gate(): { open(): void; reached: Promise<void>; hold(): Promise<void> } {
  let open!: () => void;
  let arrive!: () => void;
  const wait = new Promise<void>((r) => {
    open = r;
  });
  const reached = new Promise<void>((r) => {
    arrive = r;
  });
  return {
    open,
    reached,
    hold: () => {
      arrive();
      return wait;
    },
  };
}

/** Hooks on a store's claim and outcome writes (the real statements run; the hooks only wait or throw). */
interface StoreHooks {
  beforeClaim?: () => Promise<void>;
  afterClaim?: () => Promise<void>;
  /** Before a write that makes an original step SUCCEEDED. */
  beforeSucceeded?: () => Promise<void>;
  /** After such a write committed: throwing here is a process that died right after its commit. */
  afterSucceeded?: () => Promise<void>;
}

function hooked(store: IntentStore, hooks: StoreHooks): IntentStore {
  return new Proxy(store, {
    get(target, property) {
      if (property === "claim") {
        return async (...args: Parameters<IntentStore["claim"]>) => {
          await hooks.beforeClaim?.();
          const result = await target.claim(...args);
          await hooks.afterClaim?.();
          return result;
        };
      }
      if (property === "update") {
        return async (...args: Parameters<IntentStore["update"]>) => {
          const original = args[2].status === "SUCCEEDED" && args[2].compensation !== undefined;
          if (original) await hooks.beforeSucceeded?.();
          const updated = await target.update(...args);
          if (original && updated) await hooks.afterSucceeded?.();
          return updated;
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

describe("rule 13: an abort is a durable state of the run (real PostgreSQL, fake trip services)", () => {
  const cleanup = new Cleanup();
  let db: TestDatabase;
  let services: TripServices;
  let store: PrismaIntentStore;
  let runId: string;

  beforeEach(async () => {
    db = cleanup.add(await createTestDatabase(), (d) => d.drop());
    services = cleanup.add(await startTripServices(), (s) => s.close());
    store = cleanup.add(createPrismaIntentStore({ databaseUrl: db.url, poolSize: 6 }), (s) => s.close());
    runId = `run-${randomUUID().slice(0, 8)}`;
  });
  afterEach(() => cleanup.run());

  /** An executor on `on` (another store on the same database is another replica). */
  function executor(
    on: IntentStore = store,
    overrides: TripToolOverrides = {},
    options: Partial<ExecutorOptions> = {},
  ): Executor {
    return createExecutor({
      store: on,
      tools: tripTools(services, overrides),
      probe: { spacingMs: 50, timeoutMs: 500, attempts: 2 },
      reserveMs: 200,
      minCallBudgetMs: 200,
      ...options,
    });
  }
  /** A second replica: its own pool on the same database. */
  function replica(overrides: TripToolOverrides = {}, options: Partial<ExecutorOptions> = {}): Executor {
    const other = cleanup.add(createPrismaIntentStore({ databaseUrl: db.url, poolSize: 4 }), (s) => s.close());
    return executor(other, overrides, options);
  }
  const bookHotel = (ex: Executor) =>
    ex.call({ runId, stepId: "hotel", tool: "book_hotel", args: HOTEL, deadline: turn() });
  const bookFlight = (ex: Executor) =>
    ex.call({ runId, stepId: "flight", tool: "book_flight", args: FLIGHT, deadline: turn() });
  const hotelRefs = () => services.effects.hotelBookings.map((e) => e.view.booking_ref as string);
  /** Every hotel booking at the remote is cancelled exactly once, and there is `n` of them. */
  const expectEveryBookingCancelledOnce = (n: number) => {
    expect(hotelRefs()).toHaveLength(n);
    for (const ref of hotelRefs()) expect(services.hotelCancellationsOf(ref)).toBe(1);
    expect(services.posts.hotelCancellations).toBe(n);
  };
  const operatorView = async () => (await getRun(store.prisma, runId, { tenant: "default" }))?.abort;

  it("scenario 1, slow outcome write: the abort reports the step in flight (not complete); when the write lands it is cancelled once, without a second abort", async () => {
    const write = gate();
    const ex = executor(hooked(store, { beforeSucceeded: write.hold }));
    const call = bookHotel(ex);
    await write.reached; // the remote committed the booking; its outcome write is held
    const report = await ex.abortRun(runId, turn(), AGENT);
    expect(report).toMatchObject({ complete: false, inFlight: 1, undone: 0, needsHuman: 0 });
    expect(report.abort).toMatchObject({ runId, ...AGENT });
    expect(report.steps.map((s) => [s.stepId, s.outcome])).toEqual([["hotel", "in_flight"]]);
    expect(report.steps[0]!.message).toContain("undone when it settles");
    expect(await operatorView()).toMatchObject({ actorName: "trip-agent", via: "agent", complete: false });
    expect((await operatorView())!.inFlight).toHaveLength(1);
    expect(services.posts.hotelCancellations).toBe(0);

    write.open();
    const envelope = await call;
    // The agent is told: it took effect, the run was aborted, the effect is being reversed.
    expect(envelope).toMatchObject({ status: "SUCCEEDED" });
    expect(envelope.message).toContain("aborted");
    await ex.undosDone();
    expectEveryBookingCancelledOnce(1);
    const view = await operatorView();
    expect(view).toMatchObject({ complete: true, inFlight: [], waitingForPerson: [] });
    expect(view!.undone).toEqual([envelope.idempotency_key]);
    const runs = await listRuns(store.prisma, {}, { tenant: "default" });
    const listed = runs.items.find((r) => r.runId === runId);
    expect(listed).toMatchObject({ status: "aborted", abortedAtEpochMs: report.abort.abortedAtEpochMs });
    // A later abort (another caller) keeps the first one's who and why, and replays the cancellation.
    const again = await ex.abortRun(runId, turn(), OPS);
    expect(again.abort).toEqual(report.abort);
    expect(again).toMatchObject({ complete: true, undone: 1, inFlight: 0 });
    expectEveryBookingCancelledOnce(1);
  });

  it("scenario 1, slow claim (held before its statement): the abort answers complete with nothing; the claim is then refused, nothing sent", async () => {
    const claim = gate();
    const ex = executor(hooked(store, { beforeClaim: claim.hold }));
    const call = bookHotel(ex);
    await claim.reached;
    const report = await ex.abortRun(runId, turn(), AGENT);
    expect(report).toMatchObject({ complete: true, steps: [], undone: 0, inFlight: 0 });
    claim.open();
    const envelope = await call;
    expect(envelope).toMatchObject({
      status: "FAILED_NO_EFFECT",
      retry_safe: false,
      error: { code: "RUN_ABORTED_BEFORE_SEND" },
    });
    expect(envelope.message).toContain("aborted");
    expect(services.posts.hotelBookings).toBe(0);
    expect(await store.listByRun(runId)).toEqual([]);
  });

  it("scenario 1, slow claim (committed, its answer held): the abort sees the step in flight; it is sent and then cancelled once", async () => {
    const claim = gate();
    const ex = executor(hooked(store, { afterClaim: claim.hold }));
    const call = bookHotel(ex);
    await claim.reached;
    const report = await ex.abortRun(runId, turn(), AGENT);
    expect(report).toMatchObject({ complete: false, inFlight: 1 });
    claim.open();
    expect(await call).toMatchObject({ status: "SUCCEEDED" });
    await ex.undosDone();
    expectEveryBookingCancelledOnce(1);
    expect(await operatorView()).toMatchObject({ complete: true, inFlight: [] });
  });

  for (const background of [false, true]) {
    it(`across two replicas (${background ? "background" : "in-process"} outcome write): the call on one, the abort on the other; cancelled once by the replica that settled it`, async () => {
      const write = gate();
      const keyed: TripToolOverrides = { book_hotel: { resendWhenAbsent: true, keyRetentionMs: 7 * 86_400_000 } };
      const a = executor(hooked(store, { beforeSucceeded: write.hold }), background ? keyed : {}, {
        backgroundOutcomes: background,
      });
      const b = replica(background ? keyed : {});
      const call = bookHotel(a);
      if (background) {
        // Answered before its (non-durable) write lands: the agent holds SUCCEEDED, the log says PENDING.
        expect(await call).toMatchObject({ status: "SUCCEEDED" });
      }
      await write.reached;
      const report = await b.abortRun(runId, turn(), OPS);
      expect(report).toMatchObject({ complete: false, inFlight: 1, undone: 0 });
      expect(services.posts.hotelCancellations).toBe(0);
      write.open();
      if (!background) expect((await call).message).toContain("aborted");
      await a.undosDone();
      expectEveryBookingCancelledOnce(1);
      expect(await operatorView()).toMatchObject({ complete: true, via: "operator", reason: "fraud suspected" });
    });
  }

  it("scenario 2: after the abort completed, a new step is refused before sending; a repeat of the booked step replays it", async () => {
    const ex = executor();
    const hotel = await bookHotel(ex);
    const report = await ex.abortRun(runId, turn(), AGENT);
    expect(report).toMatchObject({ complete: true, undone: 1 });
    const flight = await bookFlight(ex);
    expect(flight).toMatchObject({
      status: "FAILED_NO_EFFECT",
      retry_safe: false,
      error: { code: "RUN_ABORTED_BEFORE_SEND" },
    });
    expect(flight.message).toMatch(/aborted/);
    expect(services.posts.flightBookings).toBe(0);
    expect((await store.listByRun(runId)).map((r) => r.tool).sort()).toEqual(["book_hotel", "cancel_hotel"]);
    // Another replica refuses it too (the refusal is in the claim statement, not in a process's memory).
    expect(await bookFlight(replica())).toMatchObject({ error: { code: "RUN_ABORTED_BEFORE_SEND" } });
    const repeat = await bookHotel(ex);
    expect(repeat).toMatchObject({ status: "SUCCEEDED", replayed: true, idempotency_key: hotel.idempotency_key });
    expect(services.posts.hotelBookings).toBe(1);
    expectEveryBookingCancelledOnce(1);
  });

  it("scenario 2, a new attempt of a step that failed without effect is refused too; nothing sent", async () => {
    const ex = executor();
    services.flightNoSeats = true;
    expect(await bookFlight(ex)).toMatchObject({ status: "FAILED_NO_EFFECT", retry_safe: true });
    await ex.abortRun(runId, turn(), AGENT);
    services.flightNoSeats = false;
    expect(await bookFlight(ex)).toMatchObject({
      status: "FAILED_NO_EFFECT",
      error: { code: "RUN_ABORTED_BEFORE_SEND" },
    });
    expect(services.posts.flightBookings).toBe(1);
    expect(services.effects.flightBookings).toHaveLength(0);
  });

  it("two concurrent aborts on two replicas, a booking settled and one in flight: each cancelled once", async () => {
    const write = gate();
    const a = executor(hooked(store, { beforeSucceeded: write.hold }));
    const b = replica();
    await bookFlight(b);
    const call = bookHotel(a);
    await write.reached;
    const reports = await Promise.all([a.abortRun(runId, turn(), AGENT), b.abortRun(runId, turn(), OPS)]);
    expect(reports[0]!.abort).toEqual(reports[1]!.abort);
    for (const r of reports) expect(r.complete).toBe(false);
    write.open();
    await call;
    await Promise.all([a.undosDone(), b.undosDone()]);
    expect(services.effects.flightBookings).toHaveLength(1);
    const flightRef = services.effects.flightBookings[0]!.view.booking_ref as string;
    expect(services.flightCancellationsOf(flightRef)).toBe(1);
    expect(services.posts.flightCancellations).toBe(1);
    expectEveryBookingCancelledOnce(1);
  });

  it("a process dies between the settle and the undo: the sweeper's pass cancels it once", async () => {
    const write = gate();
    const dying = executor(
      hooked(store, {
        beforeSucceeded: write.hold,
        afterSucceeded: async () => {
          throw new Error("process died after its outcome committed");
        },
      }),
    );
    const survivor = replica();
    const call = bookHotel(dying).catch((error: unknown) => error);
    await write.reached;
    expect(await survivor.abortRun(runId, turn(), AGENT)).toMatchObject({ inFlight: 1 });
    write.open();
    expect(await call).toBeInstanceOf(Error);
    expect((await store.listByRun(runId))[0]).toMatchObject({ status: "SUCCEEDED", needsHuman: false });
    expect(services.posts.hotelCancellations).toBe(0); // nobody undid it: the settling process died
    expect(await operatorView()).toMatchObject({ complete: false }); // the run page says it is not done

    const swept = await survivor.undoAbortedSteps({ graceMs: 0 });
    expect(swept.map((s) => s.outcome)).toEqual(["compensated"]);
    expectEveryBookingCancelledOnce(1);
    expect(await survivor.undoAbortedSteps({ graceMs: 0 })).toEqual([]);
    // The sweeper loop runs the same pass after its reconciliations (default grace: left to its process).
    const pass = await sweepStale({ store: survivor.store, executor: survivor, budgetMs: 5_000 });
    expect(pass.undone ?? []).toEqual([]);
    expectEveryBookingCancelledOnce(1);
    expect(await operatorView()).toMatchObject({ complete: true });
  });

  it("an abort racing the sweeper on a booking found late: cancelled once", async () => {
    const ex = executor(store, { book_hotel: { timeoutMs: 300 } }, { humanRecheckMs: 1 });
    services.fault("hotelBookings", { answer: "hang" });
    services.probesFail.hotelBookings = true;
    const hotel = await ex.call({
      runId,
      stepId: "hotel",
      tool: "book_hotel",
      args: HOTEL,
      deadline: Deadline.after(1_500),
    });
    expect(hotel).toMatchObject({ status: "UNKNOWN" });
    // Aborted while unknown: not compensated blindly, queued for a person (RUN_ABORTED).
    const first = await ex.abortRun(runId, turn(), AGENT);
    expect(first.steps.map((s) => s.outcome)).toEqual(["not_confirmed"]);
    expect(await operatorView()).toMatchObject({ complete: false });
    expect((await operatorView())!.waitingForPerson).toEqual([hotel.idempotency_key]);
    services.probesFail.hotelBookings = false;
    const other = replica({ book_hotel: { timeoutMs: 300 } }, { humanRecheckMs: 1 });
    await waitUntil(
      async () => {
        const r = await store.get(hotel.idempotency_key);
        return r !== null && r.leaseUntilEpochMs < Date.now() && (r.recheckAtEpochMs ?? Infinity) < Date.now();
      },
      "the queued record's re-check to come due",
      { timeoutMs: 30_000 },
    );
    // The sweeper's re-probe finds it (a late find after the abort) while an operator aborts again.
    await Promise.all([
      sweepStale({ store: other.store, executor: other, budgetMs: 5_000 }),
      ex.abortRun(runId, turn(), OPS),
    ]);
    await Promise.all([ex.undosDone(), other.undosDone()]);
    const settled = await store.get(hotel.idempotency_key);
    expect(settled).toMatchObject({ status: "SUCCEEDED", needsHuman: false });
    expectEveryBookingCancelledOnce(1);
    expect(await operatorView()).toMatchObject({ complete: true, waitingForPerson: [] });
  });

  it("an operator's confirm_effect on a step of an aborted run starts its undo once (here it cannot be built: a person is asked)", async () => {
    const ex = executor(store, { book_hotel: { kind: "unsafe", timeoutMs: 300, probe: undefined } });
    services.fault("hotelBookings", { answer: "hang" });
    const hotel = await ex.call({ runId, stepId: "hotel", tool: "book_hotel", args: HOTEL, deadline: turn() });
    expect(hotel.status).toBe("UNKNOWN");
    await ex.abortRun(runId, turn(), AGENT);
    const queued = await store.get(hotel.idempotency_key);
    expect(queued).toMatchObject({ needsHuman: true, error: { code: "RUN_ABORTED" } });
    const ops = new PrismaOperatorStore(store.prisma);
    await ex.resolve(
      {
        key: hotel.idempotency_key,
        action: "confirm_effect",
        note: "the hotel confirmed the booking by phone",
        expectedVersion: queued!.version,
        operatorActionId: randomUUID(),
        actor: { keyId: "key-ops", name: "ana" },
      },
      ops,
    );
    await ex.undosDone();
    // No booking reference came back, so the cancellation cannot be built: it is not silently dropped.
    const after = await store.get(hotel.idempotency_key);
    expect(after).toMatchObject({ status: "SUCCEEDED", needsHuman: true, error: { code: "COMPENSATION_FAILED" } });
    expect(services.posts.hotelCancellations).toBe(0);
    expect(await operatorView()).toMatchObject({ complete: false, waitingForPerson: [hotel.idempotency_key] });
  });
});
