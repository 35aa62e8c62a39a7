/**
 * Issue 9 §2 "A refused resend is not proof that nothing happened" (DESIGN.md rule 5f) and §5 "An
 * identity probe must not claim another step's effect" (rule 5g), on the real PostgreSQL against
 * real loopback remotes. What is asserted: the refunds that exist at the remote, what the agent was
 * told (status, retry_safe), and where each record ended (status, human queue, code, timeline).
 */
import { randomUUID } from "node:crypto";
import { Deadline, type Envelope, type Executor, shownRecord } from "@tristate/core";
import { type FakeRemote, refundTool, startFakeRemote } from "@tristate/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PrismaOperatorStore } from "../../src/operator-store.ts";
import { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { createTestDatabase, type TestDatabase } from "../../src/test-database.ts";
import { Cleanup, sleepPast, waitUntil } from "./helpers.ts";
import { serviceRefund, startRefundService } from "./reconciliation-timing.refund-service.ts";
import { mustGet, probeEvents, refund, timingExecutor } from "./reconciliation-timing.support.ts";

const ACTOR = { keyId: "key-ana", name: "ana" };

describe("issue 9 §2 and §5: refusals and other steps' effects are no proof (real PostgreSQL)", () => {
  const files = new Cleanup();
  const cleanup = new Cleanup();
  let db: TestDatabase;
  let store: PrismaIntentStore;
  let ops: PrismaOperatorStore;
  let n = 0;

  beforeAll(async () => {
    db = files.add(await createTestDatabase(), (d) => d.drop());
    store = files.add(new PrismaIntentStore({ databaseUrl: db.url, poolSize: 4 }), (s) => s.close());
    ops = new PrismaOperatorStore(store.prisma);
  });
  afterAll(() => files.run());
  afterEach(() => cleanup.run());

  function refundCall(executor: Executor, order: string, runId = `run-ev-${++n}`, stepId = "step-1") {
    return executor.call({ runId, stepId, tool: "issue_refund", args: refund(order), deadline: Deadline.after(5000) });
  }

  /** The agent's abort of a run must never call a refund that exists "no effect". */
  async function expectAbortNotNoEffect(executor: Executor, env: Envelope) {
    const record = await mustGet(store, env.idempotency_key);
    const report = await executor.abortRun(record.runId, Deadline.after(5000));
    const step = report.steps.find((s) => s.key === env.idempotency_key)!;
    expect(step).toMatchObject({ status: "UNKNOWN", outcome: "not_confirmed" });
    expect(report).toMatchObject({ complete: false, needsHuman: 1 });
  }

  describe("§2 a refused resend is not proof", () => {
    it("keyed refund committed, reset before the answer, the key store missed the key: the same-key resend is refused 400 'already refunded' → UNKNOWN, human queue RESEND_REFUSED, retry_safe false, refusal kept; abortRun says not_confirmed, never no_effect", async () => {
      const service = cleanup.add(await startRefundService("reset"), (s) => s.close());
      const executor = timingExecutor(store, [serviceRefund(service, "keyed")]);

      const env = await refundCall(executor, "R-1");
      expect(service.answers).toEqual(["reset", 400]);
      expect(service.refunds).toHaveLength(1);
      expect(env).toMatchObject({
        status: "UNKNOWN",
        retry_safe: false,
        attempt: 2,
        resolution: "needs_human",
        error: { code: "RESEND_REFUSED", httpStatus: 400 },
      });
      const record = await mustGet(store, env.idempotency_key);
      expect(shownRecord(record)).toMatchObject({
        status: "UNKNOWN",
        needsHuman: true,
        resolution: "needs_human",
        attempt: 2,
        error: { code: "RESEND_REFUSED", httpStatus: 400 },
      });
      expect(record.error!.message).toMatch(/refused.*no proof/);
      const events = await store.listEvents(env.idempotency_key);
      expect(events.map((e) => e.type)).toEqual([
        "created",
        "sent",
        "outcome",
        ...Array(3).fill("probe"),
        "resend",
        "sent",
        "outcome",
        "needs_human",
      ]);
      expect(probeEvents(events).every((e) => e.data.answer === "absent")).toBe(true);
      expect(events.at(-2)!.data).toMatchObject({
        outcome: "UNKNOWN",
        code: "RESEND_REFUSED",
        refusedWith: "REJECTED",
      });
      expect(events.at(-1)!.data).toMatchObject({ code: "RESEND_REFUSED" });

      await expectAbortNotNoEffect(executor, env);
      // The agent asking again changes nothing: no third POST.
      const again = await executor.call({
        runId: record.runId,
        stepId: "step-1",
        tool: "issue_refund",
        args: refund("R-1"),
        deadline: Deadline.after(5000),
      });
      expect(again).toMatchObject({ status: "UNKNOWN", retry_safe: false });
      expect(service.answers).toHaveLength(2);
      expect(service.refunds).toHaveLength(1);
    });

    it("the operator's resend_same_key refused 400 'already refunded' → still UNKNOWN in the human queue (RESEND_REFUSED), not FAILED_NO_EFFECT; audited; abortRun says not_confirmed", async () => {
      const service = cleanup.add(await startRefundService(504), (s) => s.close());
      const executor = timingExecutor(store, [serviceRefund(service, "unsafe-no-probe")]);

      const env = await refundCall(executor, "R-2");
      expect(env).toMatchObject({ status: "UNKNOWN", retry_safe: false, error: { code: "NO_PROBE" } });
      const waiting = await mustGet(store, env.idempotency_key);
      expect(waiting).toMatchObject({ status: "UNKNOWN", needsHuman: true });

      const result = await executor.resolve(
        {
          key: waiting.key,
          action: "resend_same_key",
          note: "the PSP dashboard shows no refund; resending",
          expectedVersion: waiting.version,
          operatorActionId: randomUUID(),
          actor: ACTOR,
        },
        ops,
      );
      expect(service.answers).toEqual([504, 400]);
      expect(service.refunds).toHaveLength(1);
      expect(result.envelope).toMatchObject({
        status: "UNKNOWN",
        retry_safe: false,
        error: { code: "RESEND_REFUSED" },
      });
      expect(shownRecord(result.record)).toMatchObject({
        status: "UNKNOWN",
        needsHuman: true,
        resolution: "needs_human",
        attempt: 2,
        error: { code: "RESEND_REFUSED", httpStatus: 400 },
      });
      expect(await mustGet(store, waiting.key)).toMatchObject({ status: "UNKNOWN", needsHuman: true });
      expect(result.audit).toMatchObject({ action: "resend_same_key", actorName: "ana", key: waiting.key });
      const types = (await store.listEvents(waiting.key)).map((e) => e.type);
      expect(types.slice(-4)).toEqual(["human_action", "sent", "outcome", "needs_human"]);
      await expectAbortNotNoEffect(executor, env);
    });

    it("a resend that was never sent (ECONNREFUSED: the remote went down after committing) leaves the original UNKNOWN, not FAILED_NO_EFFECT — by the executor and by the operator", async () => {
      const service = cleanup.add(await startRefundService("reset-then-down"), (s) => s.close());
      // Keyed, no probe, key within retention: the executor resends at once (the remote is meant to dedupe).
      const executor = timingExecutor(store, [serviceRefund(service, "keyed-no-probe")]);

      const env = await refundCall(executor, "R-3");
      expect(service.answers).toEqual(["reset"]);
      expect(service.refunds).toHaveLength(1);
      expect(env).toMatchObject({ status: "UNKNOWN", retry_safe: false, attempt: 2 });
      const record = await mustGet(store, env.idempotency_key);
      expect(record.status).toBe("UNKNOWN");
      expect(record.error!.message).toMatch(/not sent/);
      const events = await store.listEvents(record.key);
      expect(events.map((e) => e.type)).toEqual(["created", "sent", "outcome", "resend", "sent", "outcome"]);
      expect(events.at(-1)!.data).toMatchObject({ outcome: "UNKNOWN", resendNotSent: true });

      // An operator's resend that cannot be sent either: still UNKNOWN, and back with a person.
      const result = await executor.resolve(
        {
          key: record.key,
          action: "resend_same_key",
          note: "resending while the PSP is down",
          expectedVersion: record.version,
          operatorActionId: randomUUID(),
          actor: ACTOR,
        },
        ops,
      );
      expect(result.envelope).toMatchObject({ status: "UNKNOWN", retry_safe: false });
      expect(result.record).toMatchObject({ status: "UNKNOWN", needsHuman: true, attempt: 3 });
      expect(service.refunds).toHaveLength(1);
    });

    it("a resend refused with 409 ('a refund already exists', the key store having missed the key) is a refusal too: UNKNOWN → human queue RESEND_REFUSED, retry_safe false; the agent's repeat call sends nothing more", async () => {
      const remote = cleanup.add(await startFakeRemote({ honorsKey: false }), (r) => r.close());
      remote.fault({ answer: "reset" }, ...Array.from({ length: 3 }, () => ({ commit: false, answer: 409 })));
      const executor = timingExecutor(store, [refundTool(remote, { probe: undefined, probeByIdentity: undefined })]);

      const env = await refundCall(executor, "R-5");
      expect(remote.posts).toBe(2);
      expect(remote.effects).toHaveLength(1);
      const record = await mustGet(store, env.idempotency_key);
      const timeline = JSON.stringify((await store.listEvents(record.key)).map((e) => [e.type, e.data.code ?? ""]));
      expect(env, timeline).toMatchObject({ status: "UNKNOWN", retry_safe: false });
      expect(record, timeline).toMatchObject({
        status: "UNKNOWN",
        needsHuman: true,
        error: { code: "RESEND_REFUSED", httpStatus: 409 },
      });
      // "Calling again for this step only reports the status": no third POST.
      const again = await refundCall(executor, "R-5", record.runId);
      expect(again).toMatchObject({ status: "UNKNOWN", retry_safe: false });
      expect(remote.posts).toBe(2);
    });

    it("a record waiting for a person after a refused resend (keyed refund without a probe) is never resent on its own: abortRun reports not_confirmed and sends nothing — no second refund", async () => {
      // The remote's key store missed the key; it refuses the first resend (422, e.g. "order locked
      // while a refund settles") and would accept — and duplicate — any later one.
      const remote = cleanup.add(await startFakeRemote({ honorsKey: false }), (r) => r.close());
      remote.fault({ answer: "reset" }, { commit: false, answer: 422 });
      const executor = timingExecutor(store, [refundTool(remote, { probe: undefined, probeByIdentity: undefined })]);

      const env = await refundCall(executor, "R-4");
      expect(env).toMatchObject({
        status: "UNKNOWN",
        retry_safe: false,
        resolution: "needs_human",
        error: { code: "RESEND_REFUSED", httpStatus: 422 },
      });
      expect(remote.posts).toBe(2);
      expect(remote.effects).toHaveLength(1);
      const waiting = await mustGet(store, env.idempotency_key);
      expect(waiting).toMatchObject({ status: "UNKNOWN", needsHuman: true, attempt: 2 });

      // The agent's repeat call only reports.
      const again = await refundCall(executor, "R-4", waiting.runId);
      expect(again).toMatchObject({ status: "UNKNOWN", retry_safe: false });
      expect(remote.posts).toBe(2);

      // Aborting the run reconciles first; for a record waiting for a person that must not resend.
      const report = await executor.abortRun(waiting.runId, Deadline.after(5000));
      const events = (await store.listEvents(waiting.key)).map((e) => [e.type, e.data.attempt ?? e.data.code ?? ""]);
      expect(remote.posts, `timeline: ${JSON.stringify(events)}`).toBe(2);
      expect(remote.effects).toHaveLength(1);
      expect(report.steps.find((s) => s.key === waiting.key)).toMatchObject({
        status: "UNKNOWN",
        outcome: "not_confirmed",
      });
      expect(await mustGet(store, waiting.key)).toMatchObject({ status: "UNKNOWN", needsHuman: true, attempt: 2 });
    });
  });

  describe("§5 an identity probe must not claim another step's effect", () => {
    /**
     * Two legitimate refunds of the same order and amount, steps 1 and 2 in parallel. Step 2's
     * request reaches the remote first, is held 300 ms and reset with nothing kept; meanwhile step 1
     * commits (after step 2's intent, so step 2's identity probe sees it).
     */
    async function twoParallelRefunds(executor: Executor, remote: FakeRemote, order: string) {
      const runId = `run-pair-${++n}`;
      remote.fault({ commit: false, answer: "reset", respondDelayMs: 300 }, {});
      const step2 = refundCall(executor, order, runId, "step-2");
      await waitUntil(() => remote.posts === 1, "step 2's request at the remote");
      const step1 = refundCall(executor, order, runId, "step-1");
      const [env1, env2] = await Promise.all([step1, step2]);
      // Step 1's refund was committed after step 2's intent, so step 2's identity probe can see it.
      const intent2 = await mustGet(store, env2.idempotency_key);
      expect(remote.effects[0]!.clientRef).toBe(env1.idempotency_key);
      expect(remote.effects[0]!.committedAtEpochMs).toBeGreaterThanOrEqual(intent2.createdAtEpochMs);
      return { env1, env2 };
    }

    /** Step 1 ends with the first refund; step 2 with one of its own, made by its same-key resend. */
    async function expectBothOwnEffects(remote: FakeRemote, env1: Envelope, env2: Envelope) {
      expect(env1).toMatchObject({ status: "SUCCEEDED", attempt: 1 });
      expect(env2).toMatchObject({ status: "SUCCEEDED", resolution: "absent_resent", attempt: 2 });
      expect(remote.effects).toHaveLength(2);
      expect(remote.effects.map((e) => e.clientRef).sort()).toEqual(
        [env1.idempotency_key, env2.idempotency_key].sort(),
      );
      const [r1, r2] = [await mustGet(store, env1.idempotency_key), await mustGet(store, env2.idempotency_key)];
      expect(r1.result).toMatchObject({ clientRef: env1.idempotency_key });
      expect(r2.result).toMatchObject({ clientRef: env2.idempotency_key });
      expect((r1.result as { id: string }).id).not.toBe((r2.result as { id: string }).id);
      const events = await store.listEvents(env2.idempotency_key);
      // Step 1's refund was seen by identity, and judged another step's, every time.
      const verdicts = probeEvents(events).filter((e) => e.data.match !== undefined);
      expect(verdicts.length).toBeGreaterThan(0);
      expect(verdicts.every((e) => e.data.match === "other")).toBe(true);
      expect(events.some((e) => e.type === "outcome" && e.data.resolution === "found")).toBe(false);
      return verdicts;
    }

    it("keyed refund with key + identity probes: step 2's valid key probe says absent, so step 1's refund is 'other' → step 2 is resent: 2 effects, both SUCCEEDED, each with its own", async () => {
      const remote = cleanup.add(await startFakeRemote(), (r) => r.close());
      const executor = timingExecutor(store, [refundTool(remote)]);
      const { env1, env2 } = await twoParallelRefunds(executor, remote, "P-1");
      const verdicts = await expectBothOwnEffects(remote, env1, env2);
      expect(verdicts[0]!.data.why).toMatch(/key probe found nothing/);
    });

    it("with effectRef giving the effect's clientRef as key, the match carrying step 1's key is 'other' (attributed by key) → step 2 resent: 2 effects", async () => {
      const remote = cleanup.add(await startFakeRemote(), (r) => r.close());
      const tool = refundTool(remote, {
        effectRef: (found) => {
          const f = found as { clientRef?: string | null; id?: string };
          return { key: f.clientRef ?? null, remoteId: f.id ?? null };
        },
      });
      const executor = timingExecutor(store, [tool]);
      const { env1, env2 } = await twoParallelRefunds(executor, remote, "P-2");
      const verdicts = await expectBothOwnEffects(remote, env1, env2);
      expect(verdicts[0]!.data.why).toMatch(/carries another idempotency key/);
    });

    it("unsafe refund with only an identity probe (no key, no effectRef): the match may be step 1's → human queue AMBIGUOUS_IDENTITY_MATCH, 1 effect, step 2 not SUCCEEDED", async () => {
      const remote = cleanup.add(await startFakeRemote({ honorsKey: false }), (r) => r.close());
      const executor = timingExecutor(store, [refundTool(remote, { kind: "unsafe", probe: undefined, settleMs: 300 })]);
      const { env1, env2 } = await twoParallelRefunds(executor, remote, "P-3");
      expect(env1).toMatchObject({ status: "SUCCEEDED" });
      expect(env2).toMatchObject({
        status: "UNKNOWN",
        retry_safe: false,
        resolution: "needs_human",
        error: { code: "AMBIGUOUS_IDENTITY_MATCH" },
      });
      expect(remote.effects).toHaveLength(1);
      expect(remote.posts).toBe(2);
      expect(await mustGet(store, env2.idempotency_key)).toMatchObject({ status: "UNKNOWN", needsHuman: true });
      const verdicts = probeEvents(await store.listEvents(env2.idempotency_key)).filter((e) => e.data.match);
      expect(verdicts.map((e) => e.data.match)).toContain("ambiguous");
      // The reason names the other step's run, and the event carries it as a field (the dashboard links it; issue 22 §4).
      const ambiguous = verdicts.find((e) => e.data.match === "ambiguous")!;
      const runId = (await mustGet(store, env1.idempotency_key)).runId;
      expect(ambiguous.data.why).toContain(`step-1 (run ${runId})`);
      expect(ambiguous.data.owners).toEqual([{ key: env1.idempotency_key, runId, stepId: "step-1" }]);
      expect(env2.error?.message).toContain(`(run ${runId})`);
    });

    it("unsafe refund, identity probe + effectRef key + settleMs, no key probe: step 1's refund is another step's, which proves nothing of step 2's own (the probe answers one match) → the human queue, never a second send", async () => {
      const remote = cleanup.add(await startFakeRemote({ honorsKey: false }), (r) => r.close());
      const tool = refundTool(remote, {
        kind: "unsafe",
        probe: undefined,
        settleMs: 300,
        effectRef: (found) => ({ key: (found as { clientRef?: string | null }).clientRef ?? null }),
      });
      const executor = timingExecutor(store, [tool]);
      const { env1, env2 } = await twoParallelRefunds(executor, remote, "P-4");
      expect(env1).toMatchObject({ status: "SUCCEEDED" });
      expect(env2).toMatchObject({
        status: "UNKNOWN",
        retry_safe: false,
        resolution: "needs_human",
        error: { code: "AMBIGUOUS_IDENTITY_MATCH" },
      });
      const waiting = await mustGet(store, env2.idempotency_key);
      await sleepPast(Date.now() + 400); // past the settle window: still nothing is resent
      await executor.reconcileKey(waiting.key, Deadline.after(5_000));
      expect(remote.posts).toBe(2);
      expect(remote.effects).toHaveLength(1);
      expect(await mustGet(store, waiting.key)).toMatchObject({ status: "UNKNOWN", needsHuman: true });
    });
  });
});
