import { randomBytes } from "node:crypto";
import { type IntentStore, isRunAbortedError, type NewIntentRecord, type RunAbortInput } from "@tristate/core";
import { expect, it } from "vitest";

const NOW = 1_760_000_000_000;

const AGENT: RunAbortInput = { actorKeyId: "key-1", actorName: "agent-1", via: "agent", reason: "user cancelled" };

function record(runId: string, stepId: string): NewIntentRecord {
  return {
    key: randomBytes(16).toString("hex"),
    runId,
    stepId,
    tool: "book_hotel",
    args: { hotel: "H-1" },
    identity: { hotel: "H-1" },
    attempt: 1,
    leaseUntilEpochMs: NOW + 60_000,
    compensation: { tool: "cancel_hotel", kind: "compensation", args: null },
    createdAtEpochMs: NOW,
    traceId: null,
  };
}

/**
 * The run-abort part of the {@link IntentStore} contract (DESIGN.md rule 13), registered by
 * `describeIntentStoreContract`: an abort is recorded once (the first one's who and why stay), a new
 * step of an aborted run is refused by the claim while a repeat of an existing one gets its record and
 * a compensation step is still claimed, and `listUndoDue` finds the aborted runs' settled effects whose
 * compensation has not been called.
 * @param stores - returns the store under test for the running test.
 */
export function describeRunAbortContract(stores: () => IntentStore): void {
  it("run abort: recorded once, by the store's clock; the first abort's actor and reason stay", async () => {
    const store = stores();
    const runId = `run-${randomBytes(4).toString("hex")}`;
    expect(await store.getRunAbort(runId)).toBeNull();
    const first = await store.markRunAborted(runId, AGENT);
    expect(first.first).toBe(true);
    expect(first.abort).toMatchObject({ runId, ...AGENT });
    expect(Number.isFinite(first.abort.abortedAtEpochMs)).toBe(true);
    const again = await store.markRunAborted(runId, { ...AGENT, actorName: "ops", via: "operator", reason: "late" });
    expect(again).toStrictEqual({ abort: first.abort, first: false });
    expect(await store.getRunAbort(runId)).toStrictEqual(first.abort);
    expect(await store.getRunAbort(`${runId}-other`)).toBeNull();
  });

  it("run abort: a new step is refused by the claim; an existing one is returned; a compensation step is claimed", async () => {
    const store = stores();
    const runId = `run-${randomBytes(4).toString("hex")}`;
    const booked = record(runId, "book");
    expect((await store.claim(booked, [], NOW)).claimed).toBe(true);
    await store.markRunAborted(runId, AGENT);
    const refused = await store.claim(record(runId, "pay"), [], NOW).then(
      () => null,
      (error: unknown) => error,
    );
    expect(isRunAbortedError(refused)).toBe(true);
    expect(await store.listByRun(runId)).toHaveLength(1);
    const repeat = await store.claim({ ...booked }, [], NOW);
    expect(repeat.claimed).toBe(false);
    expect(!repeat.claimed && repeat.existing.key).toBe(booked.key);
    const undo = await store.claim(
      { ...record(runId, `compensate:${booked.key}`), tool: "cancel_hotel", compensation: null },
      [],
      NOW,
    );
    expect(undo.claimed).toBe(true);
  });

  it("run abort: listUndoDue finds settled effects of aborted runs whose compensation was not called", async () => {
    const store = stores();
    const runId = `run-${randomBytes(4).toString("hex")}`;
    const other = `run-${randomBytes(4).toString("hex")}`;
    const claim = async (r: NewIntentRecord) => {
      const res = await store.claim(r, [], NOW);
      if (!res.claimed) throw new Error("expected a fresh claim");
      return res.record;
    };
    const done = await claim(record(runId, "done"));
    const ran = await claim(record(runId, "ran"));
    const queued = await claim(record(runId, "queued"));
    const pending = await claim(record(runId, "pending"));
    const elsewhere = await claim(record(other, "done"));
    const succeed = { status: "SUCCEEDED", finishedAtEpochMs: NOW } as const;
    for (const r of [done, ran, queued, elsewhere]) await store.update(r.key, 1, succeed, [], NOW);
    const compensation = { tool: "cancel_hotel", kind: "compensation", args: null, key: "k".repeat(32) } as const;
    await store.update(
      ran.key,
      2,
      { compensation: { ...compensation, status: "SUCCEEDED", needsHuman: false, atEpochMs: NOW } },
      [],
      NOW,
    );
    await store.update(queued.key, 2, { needsHuman: true }, [], NOW);
    await store.markRunAborted(runId, AGENT);
    const due = await store.listUndoDue({ settledByEpochMs: NOW, limit: 10 });
    expect(due.map((r) => r.key)).toStrictEqual([done.key]);
    expect(pending.status).toBe("PENDING");
    expect(await store.listUndoDue({ settledByEpochMs: NOW - 1, limit: 10 })).toStrictEqual([]);
  });

  it("run abort: listUndoDue finds an uncorrectable tool's effect (nothing registered) until a person was asked to correct it", async () => {
    const store = stores();
    const runId = `run-${randomBytes(4).toString("hex")}`;
    const irreversible = (stepId: string): NewIntentRecord => ({
      ...record(runId, stepId),
      tool: "send_itinerary",
      compensation: null,
    });
    const claimed = async (r: NewIntentRecord) => {
      const res = await store.claim(r, [], NOW);
      if (!res.claimed) throw new Error("expected a fresh claim");
      await store.update(res.record.key, 1, { status: "SUCCEEDED", finishedAtEpochMs: NOW }, [], NOW);
      return res.record;
    };
    const mail = await claimed(irreversible("mail"));
    const asked = await claimed(irreversible("asked"));
    await store.update(
      asked.key,
      2,
      { needsHuman: true },
      [{ key: asked.key, type: "needs_human", atEpochMs: NOW, data: { code: "IRREVERSIBLE_NEEDS_CORRECTION" } }],
      NOW,
    );
    // A person acknowledged it: out of the queue, but it was asked once and is not due again.
    await store.update(asked.key, 3, { needsHuman: false }, [], NOW);
    await store.markRunAborted(runId, AGENT);
    const uncorrectableTools = ["send_itinerary"];
    const due = await store.listUndoDue({ settledByEpochMs: NOW, limit: 10, uncorrectableTools });
    expect(due.map((r) => r.key)).toStrictEqual([mail.key]);
    // Without the tool named (its catalog says it can be undone, or it is not there), nothing is due.
    expect(await store.listUndoDue({ settledByEpochMs: NOW, limit: 10 })).toStrictEqual([]);
  });
}
