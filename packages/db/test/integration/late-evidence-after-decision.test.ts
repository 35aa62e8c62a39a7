/**
 * Issue 20 §4 "Evidence that arrives after a person decided" (DESIGN.md rule 16), on real PostgreSQL
 * against a real loopback remote: a stalled worker's call goes to a person, the person rules "it did
 * not happen", and then the worker's 201 arrives (or a probe finds the effect). The evidence reopens
 * the record for a person with both pieces of evidence; it never silently overwrites the decision
 * and never stays only in the log. Effects are counted at the remote.
 */
import { Deadline, type Envelope, type Executor, type IntentRecord } from "@tristate/core";
import { type FakeRemote, refundTool, startFakeRemote } from "@tristate/testing";
import { afterEach, describe, expect, it } from "vitest";
import type { PrismaOperatorStore } from "../../src/operator-store.ts";
import type { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { Cleanup, sleep, waitUntil } from "./helpers.ts";
import {
  freshStores,
  mustGet,
  refund,
  skewedClock,
  sweepKey,
  timingExecutor,
} from "./reconciliation-timing.support.ts";

/** The stalled worker's clock runs this far behind: its lease is over by the database's clock at once. */
const SKEW_MS = -60_000;

describe("issue 20 §4: evidence after a person decided reopens the record (rule 16, real PostgreSQL)", () => {
  const cleanup = new Cleanup();
  afterEach(() => cleanup.run());

  /**
   * A stalled worker (clock 60 s behind) sends an unsafe refund that the remote commits at once but
   * answers only after `respondDelayMs` and hides from lookups; a second replica's sweeper takes the
   * record (lease past by the database's clock) and, finding nothing, sends it to the human queue;
   * an operator then confirms "no effect".
   */
  async function decidedWhileStalled(respondDelayMs: number, timeoutMs = respondDelayMs + 2000) {
    const { store, ops } = await freshStores(cleanup);
    const remote = cleanup.add(await startFakeRemote({ honorsKey: false }), (r) => r.close());
    const tool = refundTool(remote, { kind: "unsafe", probe: undefined, timeoutMs });
    const worker = timingExecutor(store, [tool], { clock: skewedClock(SKEW_MS) });
    const agent = timingExecutor(store, [tool]);
    remote.fault({ respondDelayMs, visibleAfterMs: 60_000 });
    const input = { runId: `run-late-${respondDelayMs}`, stepId: "refund", tool: "issue_refund", args: refund("P-7") };
    const key = agent.keyFor(input);
    let answered = false;
    const stalled: Promise<Envelope> = worker
      .call({ ...input, deadline: Deadline.after(respondDelayMs + 3000, worker.clock) })
      .finally(() => {
        answered = true;
      });
    // Registered after the stores, so run before they close: the worker's answer settles first.
    cleanup.add(stalled, (p) =>
      p.then(
        () => undefined,
        () => undefined,
      ),
    );
    await waitUntil(() => remote.posts === 1, "the stalled worker's request at the remote");
    await sleep(100);
    const swept = await sweepKey(store, agent, key);
    expect(swept?.envelope).toMatchObject({ status: "UNKNOWN", resolution: "needs_human" });
    const queued = await mustGet(store, key);
    const decided = await agent.resolve(
      {
        key,
        action: "confirm_no_effect",
        note: "the customer's bank shows no refund",
        expectedVersion: queued.version,
        operatorActionId: `op-decision-${respondDelayMs}`,
        actor: { keyId: "k-op", name: "operator" },
      },
      ops,
    );
    expect(decided.record).toMatchObject({ status: "FAILED_NO_EFFECT", resolution: "human_confirmed_no_effect" });
    expect(answered, "the worker's answer must arrive after the decision").toBe(false);
    return { store, ops, remote, agent, worker, input, key, stalled, stalledYet: () => answered };
  }

  /** The operator's view of the record: it waits in the human queue, and its timeline holds both sides. */
  async function expectReopened(store: PrismaIntentStore, ops: PrismaOperatorStore, key: string, says: RegExp) {
    const record = await mustGet(store, key);
    expect(record).toMatchObject({ needsHuman: true, error: { code: "CONTRADICTING_EVIDENCE" } });
    expect(record.error?.message).toMatch(says);
    const events = await store.listEvents(key);
    const reopen = events.filter((e) => e.type === "needs_human").at(-1);
    expect(reopen?.data).toMatchObject({
      code: "CONTRADICTING_EVIDENCE",
      evidence: { outcome: "SUCCEEDED", attempt: 1 },
    });
    // Both pieces of evidence are on the timeline: the person's decision, then what contradicts it.
    const types = events.map((e) => e.type);
    expect(types.indexOf("human_action")).toBeGreaterThan(-1);
    expect(types.lastIndexOf("needs_human")).toBeGreaterThan(types.indexOf("human_action"));
    expect(types).toContain("late_answer");
    // The operator is told: the record is in the human queue's list.
    expect((await ops.listNeedsHuman()).records.some((r) => r.key === key)).toBe(true);
    return record;
  }

  it("the agent tried again after the person's 'no effect' (a second effect, legitimately); then the stalled 201 arrives: reopened for a person, both effects on record, never silently SUCCEEDED-and-forgotten", async () => {
    const { store, ops, remote, agent, input, key, stalled, stalledYet } = await decidedWhileStalled(6000);
    // The agent may try again (rule 3): a new attempt, a second refund at the remote.
    const retry = await agent.call({ ...input, deadline: Deadline.after(5000) });
    expect(stalledYet(), "the stalled answer must arrive after the retry").toBe(false);
    expect(retry).toMatchObject({ status: "SUCCEEDED", attempt: 2 });
    expect(remote.effects).toHaveLength(2);
    await stalled;
    const record: IntentRecord = await expectReopened(
      store,
      ops,
      key,
      /settled it as done \(attempt 2\).*attempt 1's answer.*says it happened too: two effects may exist/,
    );
    // The record keeps attempt 2's effect as its result; attempt 1's is in the reopening event.
    expect(record).toMatchObject({ status: "SUCCEEDED", attempt: 2 });
    const reopen = (await store.listEvents(key)).filter((e) => e.type === "needs_human").at(-1)!;
    expect(JSON.stringify(reopen.data)).toContain(remote.effects[0]!.id);
    expect(remote.effects).toHaveLength(2);
    // The person settles it: acknowledge once dealt with (the queue flag clears, audited).
    const ack = await agent.resolve(
      {
        key,
        action: "confirm_effect",
        note: "refunded twice; the customer returns one",
        expectedVersion: record.version,
        operatorActionId: "op-acknowledge",
        actor: { keyId: "k-op", name: "operator" },
      },
      ops,
    );
    expect(ack.record).toMatchObject({ status: "SUCCEEDED", needsHuman: false });
  }, 30_000);

  for (const retryEnds of ["SUCCEEDED", "FAILED_NO_EFFECT"] as const) {
    it(`the stalled 201 arrives while the agent's retry is in flight; the retry ends ${retryEnds}: the effect is weighed once the retry settles — reopened for a person, never only logged`, async () => {
      const { store, ops, remote, agent, worker, input, key, stalled } = await decidedWhileStalled(2500, 12_000);
      // The retry is slow too: in flight when the stalled worker's answer arrives.
      remote.fault(
        retryEnds === "SUCCEEDED" ? { respondDelayMs: 5000 } : { commit: false, answer: 422, respondDelayMs: 5000 },
      );
      const retry = agent.call({ ...input, deadline: Deadline.after(15_000) });
      await stalled;
      expect((await mustGet(store, key)).status, "the retry must still be in flight").toBe("PENDING");
      expect(await retry).toMatchObject({ status: retryEnds, attempt: 2 });
      await worker.lateEvidenceWeighed();
      const record = await expectReopened(
        store,
        ops,
        key,
        retryEnds === "SUCCEEDED"
          ? /settled it as done \(attempt 2\).*attempt 1's answer.*two effects may exist/
          : /settled it as not having happened \(attempt 2\).*attempt 1's answer.*says it happened/,
      );
      expect(record.status).toBe("SUCCEEDED");
      expect(remote.effects).toHaveLength(retryEnds === "SUCCEEDED" ? 2 : 1);
      // A repeat sends nothing more: the record is SUCCEEDED and waits for a person.
      const repeat = await agent.call({ ...input, deadline: Deadline.after(5000) });
      expect(repeat).toMatchObject({ status: "SUCCEEDED", replayed: true });
      expect(remote.posts).toBe(2);
    }, 40_000);
  }

  it("no retry yet: the stalled 201 after the person's 'no effect' makes the record SUCCEEDED and reopened; the agent's repeat replays it and sends nothing", async () => {
    const { store, ops, remote, agent, input, key, stalled } = await decidedWhileStalled(3000);
    const late = await stalled;
    expect(late.status).toBe("SUCCEEDED");
    const record = await expectReopened(
      store,
      ops,
      key,
      /an operator settled it as not having happened \(attempt 1, human_confirmed_no_effect\); attempt 1's answer/,
    );
    expect(record).toMatchObject({ status: "SUCCEEDED", attempt: 1, resolution: "found" });
    expect(record.result).toMatchObject({ id: remote.effects[0]!.id });
    const repeat = await agent.call({ ...input, deadline: Deadline.after(5000) });
    expect(repeat).toMatchObject({ status: "SUCCEEDED", replayed: true });
    expect(remote.posts).toBe(1);
    expect(remote.effects).toHaveLength(1);
  }, 30_000);

  it("a probe run after the person's 'no effect' finds the effect under the record's key: reopened for a person (probe.rerun says so)", async () => {
    const { store, ops } = await freshStores(cleanup);
    const remote: FakeRemote = cleanup.add(await startFakeRemote({ honorsKey: false }), (r) => r.close());
    // An unsafe tool with a key probe (client reference): hidden at first, so absent → a person.
    const tool = refundTool(remote, { kind: "unsafe", timeoutMs: 2000 });
    const agent: Executor = timingExecutor(store, [tool]);
    remote.fault({ answer: 504, visibleAfterMs: 1500 });
    const input = { runId: "run-probe-later", stepId: "refund", tool: "issue_refund", args: refund("P-8") };
    const key = agent.keyFor(input);
    const first = await agent.call({ ...input, deadline: Deadline.after(3000) });
    expect(first.status).toBe("UNKNOWN");
    const queued = await mustGet(store, key);
    expect(queued.needsHuman).toBe(true);
    await agent.resolve(
      {
        key,
        action: "confirm_no_effect",
        note: "nothing in the ledger",
        expectedVersion: queued.version,
        operatorActionId: "op-probe-later",
        actor: { keyId: "k-op", name: "operator" },
      },
      ops,
    );
    await waitUntil(
      async () => ((await (await fetch(`${remote.url}/effects?clientRef=${key}`)).json()) as unknown[]).length > 0,
      "the effect visible",
    );
    const report = await agent.rerunProbes(key);
    expect(report.probes.find((p) => p.probe === "key")?.answer).toBe("found");
    expect(report.reopened).toBe(true);
    const record = await mustGet(store, key);
    expect(record).toMatchObject({ status: "SUCCEEDED", needsHuman: true, error: { code: "CONTRADICTING_EVIDENCE" } });
    expect(record.error?.message).toMatch(/a later probe says it happened/);
    expect((await ops.listNeedsHuman()).records.some((r) => r.key === key)).toBe(true);
    // A repeat replays: no second refund.
    const repeat = await agent.call({ ...input, deadline: Deadline.after(3000) });
    expect(repeat).toMatchObject({ status: "SUCCEEDED", replayed: true });
    expect(remote.effects).toHaveLength(1);
    // Looking again changes nothing more.
    expect((await agent.rerunProbes(key)).reopened).toBe(false);
  }, 30_000);
});
