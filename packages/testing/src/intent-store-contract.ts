import { randomBytes } from "node:crypto";
import type { IntentEvent, IntentRecord, IntentStore, JsonValue, NewIntentRecord } from "@tristate/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { describeTenancyContract } from "./intent-store-tenancy-contract.ts";
import { describeRunAbortContract } from "./run-abort-contract.ts";

/** A store under test and how to dispose of it (drop its database, close its pools). */
export interface StoreUnderTest {
  store: IntentStore;
  cleanup(): Promise<void>;
}

/** A fixed clock reading (epoch ms) the contract's times are built around. */
const NOW = 1_760_000_000_000;

function hex32(): string {
  return randomBytes(16).toString("hex");
}

function newRecord(overrides: Partial<NewIntentRecord> = {}): NewIntentRecord {
  return {
    key: hex32(),
    runId: `run-${hex32().slice(0, 8)}`,
    stepId: "step-1",
    tool: "refund",
    args: { order_id: "a-1", amount: "10.00", note: ["x", null, 1.5, true] },
    identity: { order_id: "A-1", amount: "10.00" },
    attempt: 1,
    leaseUntilEpochMs: NOW + 5_000,
    compensation: { tool: "charge", kind: "compensation", args: { order_id: "A-1" } },
    createdAtEpochMs: NOW,
    traceId: "0af7651916cd43dd8448eb211c80319c",
    ...overrides,
  };
}

function created(key: string, at = NOW): IntentEvent {
  return { key, type: "created", atEpochMs: at, data: { attempt: 1 } };
}

/**
 * The behaviour every {@link IntentStore} must show (the port's documentation, executable). Run it
 * against each implementation: `describeIntentStoreContract("MemoryIntentStore", async () => …)`.
 * Each test gets a fresh, empty store from `makeStore` and calls its `cleanup` afterwards.
 */
export function describeIntentStoreContract(name: string, makeStore: () => Promise<StoreUnderTest>): void {
  describe(`IntentStore contract: ${name}`, () => {
    let sut: StoreUnderTest;
    let store: IntentStore;
    beforeEach(async () => {
      sut = await makeStore();
      store = sut.store;
    });
    afterEach(async () => {
      await sut.cleanup();
    });

    async function claimNew(overrides: Partial<NewIntentRecord> = {}): Promise<IntentRecord> {
      const rec = newRecord(overrides);
      const res = await store.claim(rec, [created(rec.key)], NOW);
      if (!res.claimed) throw new Error("expected a fresh claim to win");
      return res.record;
    }

    it("claim inserts a PENDING record at version 1 and wins once", async () => {
      const rec = newRecord();
      const res = await store.claim(rec, [created(rec.key)], NOW + 1);
      expect(res.claimed).toBe(true);
      const expected: IntentRecord = {
        ...rec,
        tenant: store.tenant ?? "default",
        status: "PENDING",
        version: 1,
        result: undefined,
        error: null,
        resolution: null,
        needsHuman: false,
        reconcileSweeps: 0,
        updatedAtEpochMs: NOW + 1,
        finishedAtEpochMs: null,
        recheckAtEpochMs: rec.leaseUntilEpochMs,
        sentKey: null,
        settlesAtEpochMs: null,
      };
      expect(res.claimed && res.record).toStrictEqual(expected);
      expect(await store.get(rec.key)).toStrictEqual(expected);
      expect(await store.get(hex32())).toBeNull();
    });

    it("a second claim with the same key returns the existing record and writes nothing", async () => {
      const first = await claimNew();
      const again = newRecord({ key: first.key, runId: first.runId, args: { other: 1 } });
      const res = await store.claim(again, [{ ...created(first.key), data: { loser: true } }], NOW + 2);
      expect(res).toStrictEqual({ claimed: false, existing: first });
      expect((await store.listEvents(first.key)).map((e) => e.data)).toStrictEqual([{ attempt: 1 }]);
    });

    it("a claim with the same (run, step, tool) under another key returns the existing record", async () => {
      const first = await claimNew();
      const other = newRecord({ runId: first.runId, stepId: first.stepId, tool: first.tool });
      const res = await store.claim(other, [created(other.key)], NOW);
      expect(res).toStrictEqual({ claimed: false, existing: first });
      expect(await store.get(other.key)).toBeNull();
      expect(await store.listEvents(other.key)).toStrictEqual([]);
      // Another step or tool of the same run is a different effect.
      expect((await store.claim(newRecord({ runId: first.runId, stepId: "step-2" }), [], NOW)).claimed).toBe(true);
      expect((await store.claim(newRecord({ runId: first.runId, tool: "charge" }), [], NOW)).claimed).toBe(true);
    });

    it("20 concurrent claims of one effect: exactly one winner, every loser sees the winner", async () => {
      const base = newRecord();
      const attempts = Array.from({ length: 20 }, (_, i) =>
        // Half race on the same key, half on the same (run, step, tool) with other keys.
        i % 2 === 0 ? { ...base, args: { i } } : { ...base, key: hex32(), args: { i } },
      );
      const results = await Promise.all(attempts.map((r) => store.claim(r, [created(r.key)], NOW)));
      const winners = results.filter((r) => r.claimed);
      expect(winners).toHaveLength(1);
      const winner = winners[0]!.claimed ? winners[0]!.record : undefined;
      for (const r of results) if (!r.claimed) expect(r.existing).toStrictEqual(winner);
      expect(await store.listEvents(winner!.key)).toHaveLength(1);
    });

    it("update is compare-and-set on the version", async () => {
      const rec = await claimNew();
      const patch = { status: "SUCCEEDED", result: { refund_id: "r-1" }, finishedAtEpochMs: NOW + 30 } as const;
      const next = await store.update(rec.key, 1, patch, [], NOW + 30);
      expect(next).toStrictEqual({ ...rec, ...patch, version: 2, updatedAtEpochMs: NOW + 30 });
      const event: IntentEvent = { key: rec.key, type: "outcome", atEpochMs: NOW + 40, data: { stale: true } };
      expect(await store.update(rec.key, 1, { status: "FAILED_NO_EFFECT" }, [event], NOW + 40)).toBeNull();
      expect(await store.get(rec.key)).toStrictEqual(next);
      expect((await store.listEvents(rec.key)).map((e) => e.type)).toStrictEqual(["created"]);
      expect(await store.update(hex32(), 1, { attempt: 2 }, [], NOW)).toBeNull();
    });

    it("update writes every patchable field and leaves the others alone", async () => {
      const rec = await claimNew();
      const patch = {
        status: "UNKNOWN",
        attempt: 3,
        leaseUntilEpochMs: NOW + 99_000,
        recheckAtEpochMs: NOW + 98_000,
        error: { code: "READ_TIMEOUT", message: "no answer", httpStatus: 504 },
        compensation: null,
        resolution: "human_resent",
        needsHuman: true,
        reconcileSweeps: 4,
        finishedAtEpochMs: null,
        traceId: null,
      } as const;
      const next = await store.update(rec.key, 1, patch, [], NOW + 5, { durable: false });
      expect(next).toStrictEqual({ ...rec, ...patch, version: 2, updatedAtEpochMs: NOW + 5 });
      expect(await store.get(rec.key)).toStrictEqual(next);
      const back = await store.update(rec.key, 2, { error: null, resolution: "found", needsHuman: false }, [], NOW + 6);
      expect(back).toMatchObject({ error: null, resolution: "found", needsHuman: false, attempt: 3, version: 3 });
    });

    it("results round-trip: none (undefined) stays distinct from null, 0, false and empty string", async () => {
      const values: JsonValue[] = [null, 0, false, "", [], {}, { a: null }, [1, "two", null], "text", -1.25];
      for (const value of values) {
        const rec = await claimNew();
        expect(rec.result).toBeUndefined();
        const next = await store.update(rec.key, 1, { status: "SUCCEEDED", result: value }, [], NOW);
        expect(next!.result).toStrictEqual(value);
        const read = await store.get(rec.key);
        expect(read!.result).toStrictEqual(value);
        expect("result" in read!).toBe(true);
        // A patch without `result` keeps it.
        const kept = await store.update(rec.key, 2, { attempt: 2 }, [], NOW);
        expect(kept!.result).toStrictEqual(value);
      }
    });

    it("events are stored with the writes, in order, with increasing ids", async () => {
      const rec = newRecord();
      await store.claim(
        rec,
        [created(rec.key, NOW), { key: rec.key, type: "sent", atEpochMs: NOW + 1, data: {} }],
        NOW,
      );
      await store.update(
        rec.key,
        1,
        { status: "UNKNOWN" },
        [
          { key: rec.key, type: "outcome", atEpochMs: NOW + 2, data: { outcome: "UNKNOWN", code: "READ_TIMEOUT" } },
          { key: rec.key, type: "probe", atEpochMs: NOW + 3, data: { probe: "key", answer: "absent", n: [1, null] } },
        ],
        NOW + 2,
        { durable: false },
      );
      await store.appendEvents([
        { key: rec.key, type: "resend", atEpochMs: NOW + 4, data: { attempt: 2 } },
        { key: rec.key, type: "human_action", atEpochMs: NOW + 5, data: { by: "op" } },
      ]);
      await store.appendEvents([]);
      const events = await store.listEvents(rec.key);
      expect(events.map(({ id: _id, ...e }) => e)).toStrictEqual([
        { key: rec.key, type: "created", atEpochMs: NOW, data: { attempt: 1 } },
        { key: rec.key, type: "sent", atEpochMs: NOW + 1, data: {} },
        { key: rec.key, type: "outcome", atEpochMs: NOW + 2, data: { outcome: "UNKNOWN", code: "READ_TIMEOUT" } },
        { key: rec.key, type: "probe", atEpochMs: NOW + 3, data: { probe: "key", answer: "absent", n: [1, null] } },
        { key: rec.key, type: "resend", atEpochMs: NOW + 4, data: { attempt: 2 } },
        { key: rec.key, type: "human_action", atEpochMs: NOW + 5, data: { by: "op" } },
      ]);
      const ids = events.map((e) => e.id);
      expect([...ids].sort((a, b) => a - b)).toStrictEqual(ids);
      expect(new Set(ids).size).toBe(ids.length);
    });

    it("claimStale takes due PENDING and UNKNOWN records (human-queue ones when their re-check is due), oldest deadline first, and leases them", async () => {
      const pendingLate = await claimNew({ leaseUntilEpochMs: NOW - 1_000 });
      const pendingOld = await claimNew({ leaseUntilEpochMs: NOW - 5_000 });
      const unknownDue = await claimNew({ leaseUntilEpochMs: NOW - 3_000 });
      await store.update(unknownDue.key, 1, { status: "UNKNOWN" }, [], NOW - 3_000);
      const human = await claimNew({ leaseUntilEpochMs: NOW - 9_000 });
      // In the human queue, due at its next re-check time: not due yet.
      await store.update(
        human.key,
        1,
        { status: "UNKNOWN", needsHuman: true, recheckAtEpochMs: NOW + 300_000 },
        [],
        NOW,
      );
      const done = await claimNew({ leaseUntilEpochMs: NOW - 9_000 });
      await store.update(done.key, 1, { status: "SUCCEEDED", result: null }, [], NOW);
      const failed = await claimNew({ leaseUntilEpochMs: NOW - 9_000 });
      await store.update(failed.key, 1, { status: "FAILED_NO_EFFECT" }, [], NOW);
      const inFlight = await claimNew({ leaseUntilEpochMs: NOW + 1_000 }); // in flight: its lease has not passed
      const edge = await claimNew({ leaseUntilEpochMs: NOW }); // due only strictly after its deadline

      const lease = NOW + 60_000;
      const first = await store.claimStale({ nowEpochMs: NOW, limit: 2, leaseUntilEpochMs: lease });
      expect(first.map((r) => r.key)).toStrictEqual([pendingOld.key, unknownDue.key]);
      expect(first[0]).toStrictEqual({
        ...pendingOld,
        status: "UNKNOWN",
        leaseUntilEpochMs: lease,
        version: 2,
        updatedAtEpochMs: NOW,
        previousStatus: "PENDING",
      });
      expect(first[1]).toMatchObject({
        status: "UNKNOWN",
        leaseUntilEpochMs: lease,
        version: 3,
        previousStatus: "UNKNOWN",
      });
      const { previousStatus: _taken, ...leased } = first[0]!;
      expect(await store.get(pendingOld.key)).toStrictEqual(leased);

      const rest = await store.claimStale({ nowEpochMs: NOW, limit: 10, leaseUntilEpochMs: lease });
      expect(rest.map((r) => r.key)).toStrictEqual([pendingLate.key]);
      // Leased records are not taken again before their new deadline.
      expect(await store.claimStale({ nowEpochMs: NOW, limit: 10, leaseUntilEpochMs: lease })).toStrictEqual([]);
      const edgeTaken = await store.claimStale({ nowEpochMs: NOW + 1, limit: 10, leaseUntilEpochMs: lease });
      expect(edgeTaken.map((r) => r.key)).toStrictEqual([edge.key]);
      expect(await store.claimStale({ nowEpochMs: NOW, limit: 0, leaseUntilEpochMs: lease })).toStrictEqual([]);

      const events = async (key: string) => (await store.listEvents(key)).map(({ id: _id, ...e }) => e);
      expect((await events(pendingOld.key)).at(-1)).toStrictEqual({
        key: pendingOld.key,
        type: "lease_expired",
        atEpochMs: NOW,
        data: { previousStatus: "PENDING", previousDeadlineEpochMs: NOW - 5_000 },
      });
      expect((await events(unknownDue.key)).at(-1)).toStrictEqual({
        key: unknownDue.key,
        type: "sweep",
        atEpochMs: NOW,
        data: { previousStatus: "UNKNOWN", previousDeadlineEpochMs: NOW - 3_000 },
      });
      expect((await store.get(human.key))!.status).toBe("UNKNOWN");
      expect((await store.get(human.key))!.version).toBe(2);

      // After the lease passes, the taken records are due again (UNKNOWN now: a `sweep` event).
      const again = await store.claimStale({ nowEpochMs: lease + 1, limit: 10, leaseUntilEpochMs: lease + 60_000 });
      expect(again.map((r) => r.key).sort()).toStrictEqual(
        [pendingOld.key, unknownDue.key, pendingLate.key, edge.key, inFlight.key].sort(),
      );
      expect((await events(pendingOld.key)).at(-1)!.type).toBe("sweep");
    });

    it("claimStale leases a queued record due for its re-check and leaves its re-check time as it was", async () => {
      const queued = await claimNew({ leaseUntilEpochMs: NOW - 9_000 });
      await store.update(
        queued.key,
        1,
        { status: "UNKNOWN", needsHuman: true, recheckAtEpochMs: NOW - 1_000 },
        [],
        NOW - 9_000,
      );
      const lease = NOW + 60_000;
      const taken = await store.claimStale({ nowEpochMs: NOW, limit: 10, leaseUntilEpochMs: lease });
      expect(taken.map((r) => r.key)).toStrictEqual([queued.key]);
      expect(taken[0]).toMatchObject({
        status: "UNKNOWN",
        needsHuman: true,
        leaseUntilEpochMs: lease,
        recheckAtEpochMs: NOW - 1_000,
      });
      expect(await store.get(queued.key)).toMatchObject({ leaseUntilEpochMs: lease, recheckAtEpochMs: NOW - 1_000 });
      // Held by the lease meanwhile; due again once it passes.
      expect(await store.claimStale({ nowEpochMs: NOW + 1, limit: 10, leaseUntilEpochMs: lease })).toStrictEqual([]);
      const again = await store.claimStale({ nowEpochMs: lease + 1, limit: 10, leaseUntilEpochMs: lease + 60_000 });
      expect(again.map((r) => r.key)).toStrictEqual([queued.key]);
      expect(again[0]).toMatchObject({ leaseUntilEpochMs: lease + 60_000, recheckAtEpochMs: NOW - 1_000 });
    });

    it("claimStale never takes a record waiting only for a person (no re-check time), however late", async () => {
      const personOnly = await claimNew({ leaseUntilEpochMs: NOW - 9_000 });
      await store.update(
        personOnly.key,
        1,
        { status: "UNKNOWN", needsHuman: true, recheckAtEpochMs: null },
        [],
        NOW - 9_000,
      );
      for (const nowEpochMs of [NOW, NOW + 1e12]) {
        expect(await store.claimStale({ nowEpochMs, limit: 10, leaseUntilEpochMs: nowEpochMs + 60_000 })).toStrictEqual(
          [],
        );
      }
      expect(await store.get(personOnly.key)).toMatchObject({ status: "UNKNOWN", version: 2, recheckAtEpochMs: null });
    });

    it("update writes the new attempt's arguments, its wire key and the settle time", async () => {
      const rec = await claimNew();
      const patch = { args: { order_id: "B-2", card: "visa" }, sentKey: hex32(), settlesAtEpochMs: NOW + 7_000 };
      const next = await store.update(rec.key, 1, patch, [], NOW + 1);
      expect(next).toStrictEqual({ ...rec, ...patch, version: 2, updatedAtEpochMs: NOW + 1 });
      const cleared = await store.update(rec.key, 2, { sentKey: null, settlesAtEpochMs: null }, [], NOW + 2);
      expect(cleared).toMatchObject({ sentKey: null, settlesAtEpochMs: null, args: patch.args, version: 3 });
    });

    it("onlyIfLeaseExpired: a lease is judged by the store's clock, not the writer's (rule 9)", async () => {
      const clockNow = store.clockEpochMs ? await store.clockEpochMs() : NOW;
      const live = await claimNew({ leaseUntilEpochMs: clockNow + 600_000 });
      // A writer whose clock runs an hour ahead must not take a live lease.
      const ahead = clockNow + 3_600_000;
      expect(
        await store.update(live.key, 1, { status: "UNKNOWN" }, [], ahead, { onlyIfLeaseExpired: true }),
      ).toBeNull();
      expect((await store.get(live.key))!.status).toBe("PENDING");
      const expired = await claimNew({ leaseUntilEpochMs: clockNow - 1_000 });
      const taken = await store.update(expired.key, 1, { status: "UNKNOWN" }, [], clockNow, {
        onlyIfLeaseExpired: true,
      });
      expect(taken).toMatchObject({ status: "UNKNOWN", version: 2 });
    });

    it("listByIdentity: other records of the tool with the same identity since a time", async () => {
      const identity = { order_id: "ID-7", amount: "10.00" };
      const a = await claimNew({ identity, createdAtEpochMs: NOW });
      const b = await claimNew({ identity, createdAtEpochMs: NOW + 10 });
      await claimNew({ identity: { order_id: "ID-7", amount: "11.00" }, createdAtEpochMs: NOW + 10 });
      await claimNew({ identity, tool: "charge", createdAtEpochMs: NOW + 10 });
      const old = await claimNew({ identity, createdAtEpochMs: NOW - 60_000 });
      const found = await store.listByIdentity("refund", { amount: "10.00", order_id: "ID-7" }, NOW - 1, a.key);
      expect(found.map((r) => r.key)).toStrictEqual([b.key]);
      const all = await store.listByIdentity("refund", identity, NOW - 120_000, "none");
      expect(all.map((r) => r.key).sort()).toStrictEqual([a.key, b.key, old.key].sort());
    });

    it("concurrent claimStale calls never return the same record", async () => {
      const keys: string[] = [];
      for (let i = 0; i < 30; i++) keys.push((await claimNew({ leaseUntilEpochMs: NOW - 10_000 + i })).key);
      const batches = await Promise.all(
        Array.from({ length: 4 }, () =>
          store.claimStale({ nowEpochMs: NOW, limit: 10, leaseUntilEpochMs: NOW + 60_000 }),
        ),
      );
      const taken = batches.flat().map((r) => r.key);
      expect(new Set(taken).size).toBe(taken.length);
      for (const b of batches) expect(b.length).toBeLessThanOrEqual(10);
      // Whatever one sweeper skipped is still there for the next pass; nothing is lost.
      const later = await store.claimStale({ nowEpochMs: NOW, limit: 100, leaseUntilEpochMs: NOW + 60_000 });
      expect([...taken, ...later.map((r) => r.key)].sort()).toStrictEqual([...keys].sort());
      for (const key of keys) {
        const types = (await store.listEvents(key)).map((e) => e.type);
        expect(types.filter((t) => t === "lease_expired")).toHaveLength(1);
      }
    });
    describeTenancyContract(() => store);
    describeRunAbortContract(() => store);
  });
}
