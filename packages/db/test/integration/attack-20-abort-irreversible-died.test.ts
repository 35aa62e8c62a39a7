/**
 * Attack on issue 20 §1 (rule 13), kill mid-call: an irreversible step with no corrective action settles
 * after its run was aborted, and the process that settled it dies right after its SUCCEEDED write
 * committed (before its own undo — here: asking a person — ran). Another replica's sweeper must then ask a
 * person (the booking stands at the remote and cannot be undone automatically), as the abort-time path
 * does (`undoStep` → IRREVERSIBLE_NEEDS_CORRECTION). Effects counted at the fake trip services.
 */
import { randomUUID } from "node:crypto";
import { createExecutor, Deadline, type IntentStore, type RunAbortInput, sweepStale } from "@tristate/core";
import { startTripServices, type TripServices, tripTools } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createPrismaIntentStore, createTestDatabase, getRun, type TestDatabase } from "../../src/index.ts";
import type { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { Cleanup } from "./helpers.ts";

const HOTEL = { hotel_id: "H-LIS-7", guest_ref: "G-42", check_in: "2026-07-01", nights: 3 };
const AGENT: RunAbortInput = {
  actorKeyId: "key-agent",
  actorName: "trip-agent",
  via: "agent",
  reason: "user cancelled",
};
const turn = () => Deadline.after(8_000);
/** book_hotel as an irreversible tool with no corrective action (a person must correct it after an abort). */
const IRREVERSIBLE = { book_hotel: { irreversible: true, compensation: undefined, corrective: undefined } } as never;

describe("attack 20: irreversible step settles after the abort, its process dies before asking a person", () => {
  const cleanup = new Cleanup();
  let db: TestDatabase;
  let services: TripServices;
  let store: PrismaIntentStore;
  let runId: string;

  beforeEach(async () => {
    db = cleanup.add(await createTestDatabase(), (d) => d.drop());
    services = cleanup.add(await startTripServices(), (s) => s.close());
    store = cleanup.add(createPrismaIntentStore({ databaseUrl: db.url, poolSize: 4 }), (s) => s.close());
    runId = `run-${randomUUID().slice(0, 8)}`;
  });
  afterEach(() => cleanup.run());

  const make = (on: IntentStore) =>
    createExecutor({
      store: on,
      tools: tripTools(services, IRREVERSIBLE),
      probe: { spacingMs: 50, timeoutMs: 500, attempts: 2 },
      reserveMs: 200,
      minCallBudgetMs: 200,
    });

  // Was a bug (rule 13 + kill mid-call): the sweeper's pass listed only records with a registered
  // compensation, and an irreversible tool without a corrective registers none. listUndoDue now also
  // takes the catalog's uncorrectable tools (never yet sent to a person for correction).
  it("the sweeper asks a person for the standing irreversible booking", async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    let reached!: () => void;
    const atWrite = new Promise<void>((r) => {
      reached = r;
    });
    const dyingStore = new Proxy(store as IntentStore, {
      get(target, property) {
        if (property === "update") {
          return async (...args: Parameters<IntentStore["update"]>) => {
            const settling = args[2].status === "SUCCEEDED";
            if (settling) {
              reached();
              await held;
            }
            const updated = await target.update(...args);
            if (settling && updated) throw new Error("process died after its outcome committed");
            return updated;
          };
        }
        const value = Reflect.get(target, property, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const dying = make(dyingStore);
    const other = cleanup.add(createPrismaIntentStore({ databaseUrl: db.url, poolSize: 4 }), (s) => s.close());
    const survivor = make(other);

    const call = dying
      .call({ runId, stepId: "hotel", tool: "book_hotel", args: HOTEL, deadline: turn() })
      .catch((e: unknown) => e);
    await atWrite; // the remote committed the booking; its outcome write is held
    const report = await survivor.abortRun(runId, turn(), AGENT);
    expect(report).toMatchObject({ inFlight: 1, complete: false });
    release();
    expect(await call).toBeInstanceOf(Error);
    expect(services.effects.hotelBookings).toHaveLength(1);

    await survivor.undoAbortedSteps({ graceMs: 0 });
    await sweepStale({ store: other, executor: survivor, budgetMs: 5_000 });
    await survivor.undosDone();
    const [record] = await store.listByRun(runId);
    const view = (await getRun(store.prisma, runId, { tenant: "default" }))?.abort;
    // The operator must be asked: the record in the human queue, the run page waiting for a person.
    expect({
      needsHuman: record?.needsHuman,
      waiting: view?.waitingForPerson.length,
      complete: view?.complete,
    }).toEqual({
      needsHuman: true,
      waiting: 1,
      complete: false,
    });
  });
});
