import { FakeClock, type FakeRemote, refundTool, startFakeRemote } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Deadline } from "./deadline.ts";
import { createExecutor, type Executor } from "./executor.ts";
import type { IntentRecord } from "./intent-store.ts";
import { MemoryIntentStore } from "./memory-intent-store.ts";
import { type OperatorActionError, type OperatorActionInput, operatorOptions } from "./operator/index.ts";
import type { OperatorStore } from "./operator-store.ts";
import type { AnyTool } from "./tool.ts";

const refund = { order_id: "A-1182", amount: "49.90", currency: "EUR" };
const actor = { keyId: "key-ana", name: "ana" };

describe("operator actions (operator/) on MemoryIntentStore", () => {
  let remote: FakeRemote;
  let store: MemoryIntentStore;
  let clock: FakeClock;
  let seq = 0;

  beforeEach(async () => {
    remote = await startFakeRemote();
    store = new MemoryIntentStore();
    clock = new FakeClock(Date.now());
  });
  afterEach(async () => {
    await remote.close();
  });

  /** An unsafe tool without probes: a 504 sends the record straight to the human queue. */
  function unsafeTool(): AnyTool {
    return refundTool(remote, { kind: "unsafe", probe: undefined, probeByIdentity: undefined });
  }
  function executor(tools: AnyTool[] = [unsafeTool()]): Executor {
    return createExecutor({ store, tools, clock, probe: { spacingMs: 0, attempts: 1 } });
  }
  /** A record waiting for a human (the remote answered 504 and did nothing). */
  async function waiting(ex: Executor, commit = false): Promise<IntentRecord> {
    remote.fault({ answer: 504, commit });
    const env = await ex.call({
      runId: "run-1",
      stepId: `step-${++seq}`,
      tool: "issue_refund",
      args: refund,
      deadline: Deadline.after(10_000, clock),
    });
    expect(env).toMatchObject({ status: "UNKNOWN", resolution: "needs_human" });
    const record = await store.get(env.idempotency_key);
    expect(record?.needsHuman).toBe(true);
    return record!;
  }
  const input = (record: IntentRecord, over: Partial<OperatorActionInput> = {}): OperatorActionInput => ({
    key: record.key,
    action: "confirm_effect",
    note: "checked the PSP dashboard",
    expectedVersion: record.version,
    operatorActionId: `op-${Math.random().toString(36).slice(2, 12)}`,
    actor,
    ...over,
  });
  async function refusal(p: Promise<unknown>): Promise<OperatorActionError> {
    try {
      await p;
    } catch (error) {
      return error as OperatorActionError;
    }
    throw new Error("expected a refusal");
  }

  it("confirm_effect → SUCCEEDED human_confirmed_effect; a human_action event and an audit row before → after", async () => {
    const ex = executor();
    const record = await waiting(ex);
    const res = await ex.resolve(input(record, { operatorActionId: "op-confirm-1" }));
    expect(res.replayed).toBe(false);
    expect(res.record).toMatchObject({
      status: "SUCCEEDED",
      resolution: "human_confirmed_effect",
      needsHuman: false,
      error: null,
      version: record.version + 1,
    });
    expect(res.envelope).toMatchObject({ status: "SUCCEEDED", retry_safe: true, resolution: "human_confirmed_effect" });
    const events = (await store.listEvents(record.key)).filter((e) => e.type === "human_action");
    expect(events).toHaveLength(1);
    expect(events[0]?.data).toMatchObject({
      action: "confirm_effect",
      actor: "ana",
      note: "checked the PSP dashboard",
      operatorActionId: "op-confirm-1",
    });
    const audit = await store.listAudit();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      action: "confirm_effect",
      actorName: "ana",
      key: record.key,
      tool: "issue_refund",
    });
    expect(audit[0]?.before).toMatchObject({ status: "UNKNOWN", needsHuman: true, version: record.version });
    expect(audit[0]?.after).toMatchObject({ status: "SUCCEEDED", version: record.version + 1 });
    // The agent's repeat call now replays the settled record (rule 1): nothing is sent.
    const posts = remote.posts;
    const env = await ex.call({
      runId: "run-1",
      stepId: record.stepId,
      tool: "issue_refund",
      args: refund,
      deadline: Deadline.after(10_000, clock),
    });
    expect(env).toMatchObject({ status: "SUCCEEDED", replayed: true });
    expect(remote.posts).toBe(posts);
  });

  it("confirm_no_effect → FAILED_NO_EFFECT human_confirmed_no_effect: the agent may try again (rule 3)", async () => {
    const ex = executor();
    const record = await waiting(ex);
    const res = await ex.resolve(input(record, { action: "confirm_no_effect" }));
    expect(res.record).toMatchObject({
      status: "FAILED_NO_EFFECT",
      resolution: "human_confirmed_no_effect",
      needsHuman: false,
      error: { code: "OPERATOR_CONFIRMED_NO_EFFECT" },
    });
    expect(res.envelope).toMatchObject({ status: "FAILED_NO_EFFECT", retry_safe: true });
    const env = await ex.call({
      runId: "run-1",
      stepId: record.stepId,
      tool: "issue_refund",
      args: refund,
      deadline: Deadline.after(10_000, clock),
    });
    expect(env).toMatchObject({ status: "SUCCEEDED", attempt: 2, replayed: false });
    expect(remote.effects).toHaveLength(1);
  });

  it("a repeated operatorActionId is answered from the audit row, not re-done (also when racing)", async () => {
    const ex = executor();
    const record = await waiting(ex);
    const same = input(record, { operatorActionId: "0b8f6f4e-2c1d-4b7a-9a51-3f0d2e6c1a77" });
    const [a, b] = await Promise.all([ex.resolve(same), ex.resolve(same)]);
    expect([a.replayed, b.replayed].sort()).toEqual([false, true]);
    expect(a.record).toEqual(b.record);
    const again = await ex.resolve(same);
    expect(again).toMatchObject({ replayed: true, record: { status: "SUCCEEDED", version: record.version + 1 } });
    expect(await store.listAudit()).toHaveLength(1);
    expect((await store.listEvents(record.key)).filter((e) => e.type === "human_action")).toHaveLength(1);
    // The same id for another action is refused, not replayed.
    const reused = await refusal(ex.resolve({ ...same, action: "confirm_no_effect" }));
    expect(reused).toMatchObject({ code: "ACTION_ID_REUSED", field: "operatorActionId" });
  });

  it("the identical request that commits between a repeat's audit look-up and its checks: the repeat is replayed, not refused", async () => {
    const ex = executor();
    const record = await waiting(ex);
    const same = input(record);
    // The repeat looked for the action id just before the first request committed…
    let looked = false;
    const late: OperatorStore = {
      applyOperatorAction: (change) => store.applyOperatorAction(change),
      latestAudit: (key) => store.latestAudit(key),
      findAudit: async (id) => {
        if (looked) return store.findAudit(id);
        looked = true;
        await ex.resolve(same); // …and the first request commits now.
        return null;
      },
    };
    const repeat = await ex.resolve(same, late);
    expect(repeat).toMatchObject({ replayed: true, record: { status: "SUCCEEDED", version: record.version + 1 } });
    expect(await store.listAudit()).toHaveLength(1);
    // A different action id on the changed record is still refused (stale version).
    const other = await refusal(ex.resolve(input(record)));
    expect(other).toMatchObject({ code: "STALE_VERSION" });
  });

  it("two operators: the second, holding the old version, is refused with the winner's resolution", async () => {
    const ex = executor();
    const record = await waiting(ex);
    await ex.resolve(input(record, { action: "confirm_effect", note: "seen in the ledger" }));
    const err = await refusal(
      ex.resolve(input(record, { action: "confirm_no_effect", actor: { keyId: "key-bo", name: "bo" } })),
    );
    expect(err).toMatchObject({ code: "STALE_VERSION", field: "expectedVersion" });
    expect(err.message).toMatch(/operator ana chose confirm_effect/);
    expect(err.detail?.winner).toMatchObject({
      by: "operator",
      actor: "ana",
      action: "confirm_effect",
      note: "seen in the ledger",
    });
    expect((await store.get(record.key))?.status).toBe("SUCCEEDED");
    expect(await store.listAudit()).toHaveLength(1);
  });

  it("a stale version changed by the executor itself (a probe found it) says so", async () => {
    const tool = refundTool(remote, { kind: "unsafe", resendWhenAbsent: false });
    const ex = executor([tool]);
    remote.fault({ answer: 504, commit: false });
    const env = await ex.call({
      runId: "run-1",
      stepId: "step-probe",
      tool: "issue_refund",
      args: refund,
      deadline: Deadline.after(10_000, clock),
    });
    const record = (await store.get(env.idempotency_key))!;
    expect(record).toMatchObject({ status: "UNKNOWN", needsHuman: true, error: { code: "PROBES_ABSENT_NO_DEDUPE" } });
    // The late original lands; a repeat call's reconciliation finds it.
    remote.effects.push({
      id: "late",
      clientRef: record.key,
      body: refund,
      committedAtEpochMs: Date.now(),
      visibleAtEpochMs: 0,
      state: "succeeded",
    });
    const found = await ex.call({
      runId: "run-1",
      stepId: "step-probe",
      tool: "issue_refund",
      args: refund,
      deadline: Deadline.after(10_000, clock),
    });
    expect(found).toMatchObject({ status: "SUCCEEDED", resolution: "found" });
    const err = await refusal(ex.resolve(input(record)));
    expect(err).toMatchObject({ code: "STALE_VERSION" });
    expect(err.detail?.winner).toMatchObject({ by: "executor", actor: "executor", action: "found" });
    expect(err.message).toMatch(/the executor changed it .*a probe found the effect/);
  });

  it("refuses a record that is not waiting for a human, naming its state; nothing changes", async () => {
    const ex = executor();
    const env = await ex.call({
      runId: "run-1",
      stepId: "ok",
      tool: "issue_refund",
      args: refund,
      deadline: Deadline.after(10_000, clock),
    });
    const record = (await store.get(env.idempotency_key))!;
    expect(record.status).toBe("SUCCEEDED");
    const err = await refusal(ex.resolve(input(record, { action: "confirm_no_effect" })));
    expect(err).toMatchObject({ code: "NOT_WAITING" });
    expect(err.message).toMatch(/not waiting for a human: it is SUCCEEDED/);
    expect(await store.get(record.key)).toEqual(record);
    expect(await store.listAudit()).toHaveLength(0);

    // A PENDING within its lease belongs to a call in flight (rule 2).
    const claim = await store.claim(
      { ...record, key: "f".repeat(32), stepId: "live", attempt: 1, leaseUntilEpochMs: clock.nowEpochMs() + 60_000 },
      [],
      clock.nowEpochMs(),
    );
    expect(claim.claimed).toBe(true);
    const live = await refusal(ex.resolve(input({ ...record, key: "f".repeat(32), version: 1 })));
    expect(live).toMatchObject({ code: "NOT_WAITING" });
    expect(live.message).toMatch(/PENDING \(a call is in flight/);
    // Past its lease, it may be settled.
    clock.advance(61_000);
    const settled = await ex.resolve(input({ ...record, key: "f".repeat(32), version: 1 }));
    expect(settled.record.status).toBe("SUCCEEDED");
  });

  it("resend_same_key on an absent effect → SUCCEEDED human_resent, attempt + 1, exactly one effect", async () => {
    const ex = executor();
    const record = await waiting(ex);
    expect(remote.effects).toHaveLength(0);
    const res = await ex.resolve(input(record, { action: "resend_same_key", note: "PSP shows nothing" }));
    expect(res.record).toMatchObject({
      status: "SUCCEEDED",
      resolution: "human_resent",
      attempt: record.attempt + 1,
      needsHuman: false,
      version: record.version + 2,
    });
    expect(res.envelope).toMatchObject({ status: "SUCCEEDED", resolution: "human_resent", replayed: false });
    expect(res.warnings.join(" ")).toMatch(/unsafe/);
    expect(res.keyExpired).toBe(false);
    expect(remote.effects).toHaveLength(1);
    expect(remote.keysSeen).toEqual([record.key, record.key]);
    expect(remote.bodiesSeen.at(-1)).toEqual(refund);
    expect(res.audit.after).toMatchObject({ status: "PENDING", attempt: record.attempt + 1 });
    const replay = await ex.resolve(
      input(record, { action: "resend_same_key", operatorActionId: res.audit.operatorActionId }),
    );
    expect(replay).toMatchObject({ replayed: true, record: { status: "SUCCEEDED", resolution: "human_resent" } });
    expect(remote.effects).toHaveLength(1);
  });

  it("resend_same_key: an ambiguous answer leaves it UNKNOWN for reconciliation; an old record warns keyExpired", async () => {
    const ex = executor();
    const record = await waiting(ex);
    clock.advance(25 * 3600_000);
    remote.fault({ answer: 503, commit: false });
    const res = await ex.resolve(input(record, { action: "resend_same_key" }));
    expect(res.keyExpired).toBe(true);
    expect(res.warnings.join(" ")).toMatch(/key retention/);
    expect(res.record).toMatchObject({ status: "UNKNOWN", needsHuman: false, attempt: record.attempt + 1 });
    expect(res.envelope).toMatchObject({ status: "UNKNOWN", retry_safe: false });
  });

  it("refuses compensate of an unconfirmed effect (rule 6) and resend of a read_only tool; unknown actions and bad input name the field", async () => {
    const ex = executor();
    const record = await waiting(ex);
    const comp = await refusal(ex.resolve(input(record, { action: "compensate" })));
    expect(comp).toMatchObject({ code: "NOT_ALLOWED", field: "action" });
    expect(comp.message).toMatch(/rule 6/);
    const readOnly = refundTool(remote, { kind: "read_only" });
    expect(operatorOptions(record, readOnly, clock.nowEpochMs())).toMatchObject({
      resendAllowed: false,
      resendRefusal: expect.stringMatching(/read_only/),
    });
    const ro = createExecutor({ store, tools: [readOnly], clock });
    expect(await refusal(ro.resolve(input(record, { action: "resend_same_key" })))).toMatchObject({
      code: "NOT_ALLOWED",
      field: "action",
    });
    expect(await refusal(ex.resolve(input(record, { action: "undo" as never })))).toMatchObject({
      code: "INVALID_INPUT",
      field: "action",
    });
    expect(await refusal(ex.resolve(input(record, { note: "  " })))).toMatchObject({ field: "note" });
    for (const note of ["checked\u0000", "checked \ud800"]) {
      expect(await refusal(ex.resolve(input(record, { note })))).toMatchObject({
        code: "INVALID_INPUT",
        field: "note",
      });
    }
    expect(await refusal(ex.resolve(input(record, { operatorActionId: "short" })))).toMatchObject({
      field: "operatorActionId",
    });
    expect(await refusal(ex.resolve(input({ ...record, key: "0".repeat(32) })))).toMatchObject({ code: "NOT_FOUND" });
    expect(await store.get(record.key)).toEqual(record);
    expect(await store.listAudit()).toHaveLength(0);
  });

  it("rerunProbes reports each probe's answer and changes nothing", async () => {
    const ex = executor([refundTool(remote)]);
    const record = await waiting(executor(), false);
    const before = await store.listEvents(record.key);
    const absent = await ex.rerunProbes(record.key);
    expect(absent.probes.map((p) => [p.probe, p.answer])).toEqual([
      ["key", "absent"],
      ["identity", "absent"],
    ]);
    remote.effects.push({
      id: "fx_late",
      clientRef: record.key,
      body: refund,
      committedAtEpochMs: Date.now(),
      visibleAtEpochMs: 0,
      state: "processing",
    });
    const found = await ex.rerunProbes(record.key);
    expect(found.probes[0]).toMatchObject({ probe: "key", answer: "found", found: { id: "fx_late" } });
    expect(found.summary).toMatch(/confirm_effect/);
    remote.probesFail = true;
    const failed = await ex.rerunProbes(record.key);
    expect(failed.probes.every((p) => p.answer === "failed" && typeof p.message === "string")).toBe(true);
    expect(await store.get(record.key)).toEqual(record);
    expect(await store.listEvents(record.key)).toEqual(before);
    const none = await executor().rerunProbes(record.key);
    expect(none).toMatchObject({ probes: [], summary: expect.stringMatching(/no probe/) });
  });

  it("an aborted run's irreversible effect (no corrective) waits in the queue: confirm_effect acknowledges it, nothing else is allowed", async () => {
    const ex = executor([refundTool(remote, { irreversible: true })]);
    const env = await ex.call({
      runId: "run-irr",
      stepId: "refund",
      tool: "issue_refund",
      args: refund,
      deadline: Deadline.after(10_000, clock),
    });
    expect(env.status).toBe("SUCCEEDED");
    const report = await ex.abortRun("run-irr", Deadline.after(10_000, clock));
    expect(report.steps.map((st) => st.outcome)).toEqual(["needs_correction"]);
    const queued = (await store.get(env.idempotency_key))!;
    expect(queued).toMatchObject({ status: "SUCCEEDED", needsHuman: true });
    for (const action of ["confirm_no_effect", "resend_same_key"] as const) {
      const refused = await refusal(ex.resolve(input(queued, { action })));
      expect(refused).toMatchObject({ code: "NOT_WAITING", field: "action" });
    }
    expect(await store.get(env.idempotency_key)).toMatchObject({ version: queued.version, needsHuman: true });
    const done = await ex.resolve(input(queued, { note: "refunded back by hand" }));
    expect(done.record).toMatchObject({
      status: "SUCCEEDED",
      needsHuman: false,
      resolution: "human_confirmed_effect",
      finishedAtEpochMs: queued.finishedAtEpochMs,
    });
    expect(done.audit).toMatchObject({ action: "confirm_effect", note: "refunded back by hand" });
    expect(remote.effects).toHaveLength(1);
  });

  it("with backgroundOutcomes, an operator's resend is answered only after its outcome is written (the reported human_resent is the log's)", async () => {
    let release!: () => void;
    const hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    class HeldStore extends MemoryIntentStore {
      holding = false;
      override async update(...args: Parameters<MemoryIntentStore["update"]>) {
        if (this.holding && args[2].status === "SUCCEEDED") await hold;
        return super.update(...args);
      }
    }
    store = new HeldStore();
    const ex = createExecutor({ store, tools: [refundTool(remote)], clock, backgroundOutcomes: true });
    const env = await ex.call({
      runId: "run-bg",
      stepId: "refund",
      tool: "issue_refund",
      args: refund,
      deadline: Deadline.after(10_000, clock),
    });
    await ex.outcomesWritten();
    // Put it in the queue as if its outcome had been lost and nothing could decide it.
    const done = (await store.get(env.idempotency_key))!;
    const queued = (await store.update(
      done.key,
      done.version,
      { status: "UNKNOWN", needsHuman: true, resolution: null },
      [],
      clock.nowEpochMs(),
    ))!;
    (store as HeldStore).holding = true;
    let answered = false;
    const resent = ex.resolve(input(queued, { action: "resend_same_key" })).then((r) => {
      answered = true;
      return r;
    });
    for (let i = 0; i < 50 && remote.effects.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 50));
    expect(answered).toBe(false); // the write is held: no answer yet
    release();
    const result = await resent;
    expect(result.record).toMatchObject({ status: "SUCCEEDED", resolution: "human_resent" });
    expect(await store.get(queued.key)).toMatchObject({ status: "SUCCEEDED", resolution: "human_resent" });
  });
});
