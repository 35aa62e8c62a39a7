/**
 * Regressions of the attack on "never a duplicate effect, never a silent gap" (fixed in 3599041),
 * evidence and human-queue part, on the real PostgreSQL (a database of its own) against real
 * loopback remotes. The clock part is attack-regressions-clock.test.ts; the store-free part is
 * packages/core/test/issue-9/attack-regressions.test.ts.
 *
 * - B1 (rule 5f): a refused same-key resend's answer is stored by the remote under the key; the key
 *   probe reading it back (`refusedUnderKey`) is not the original's refusal. The record never
 *   settles FAILED_NO_EFFECT while the refund exists: not on a repeat call, a sweeper re-check, an
 *   abortRun, nor after an operator's resend.
 * - B2 (rule 5g): an identity match another step holds is no evidence of this record's absence (the
 *   probe answers with one match, which may hide this record's own): the human queue, never a third effect.
 * - B4 (rule 6): abortRun on a step whose absence is not conclusive yet puts it in the human queue
 *   (RUN_ABORTED); it is never resent; found later, it stays there (SUCCEEDED) to be compensated.
 */
import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type AnyTool,
  callHttp,
  canon,
  Deadline,
  defineTool,
  type Executor,
  isRejectedError,
  legacyDeadline,
  refusedUnderKey,
  shownRecord,
} from "@tristate/core";
import { type FakeRemote, refundTool, startFakeRemote } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { PrismaOperatorStore } from "../../src/operator-store.ts";
import type { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { Cleanup, sleep, sleepPast } from "./helpers.ts";
import { freshStores, mustGet, refund, sweepKey, timingExecutor } from "./reconciliation-timing.support.ts";

const ACTOR = { keyId: "key-ops", name: "ops" };
/** How soon the sweeper re-checks a record waiting in the human queue (production: 5 min). */
const HUMAN_RECHECK_MS = 200;

/**
 * A keyed refund API whose key store missed the original's key (a crash between the refund's commit
 * and the key write; the socket resets). A second refund of the same order and amount is refused
 * 400 "charge already refunded", and that answer IS stored under its key (the endpoint ran, as Stripe
 * stores any answer of an endpoint that started executing). `GET /by-key/<key>` returns the stored answer.
 */
interface KeyStoreRemote {
  readonly url: string;
  readonly refunds: { id: string; order_id: string; amount: string }[];
  /** Refund POSTs that reached the remote. */
  posts: number;
  close(): Promise<void>;
}

async function startKeyStoreRemote(): Promise<KeyStoreRemote> {
  const byKey = new Map<string, { status: number; body: unknown }>();
  const state = { refunds: [] as KeyStoreRemote["refunds"], posts: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      const json = (status: number, body: unknown) =>
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
      if (req.method === "GET" && url.pathname.startsWith("/by-key/")) {
        const hit = byKey.get(decodeURIComponent(url.pathname.slice("/by-key/".length)));
        return hit ? json(200, hit) : json(404, { error: "no such key" });
      }
      state.posts++;
      const key = req.headers["idempotency-key"] as string;
      const prior = byKey.get(key);
      if (prior) return json(prior.status, prior.body);
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { order_id: string; amount: string };
      const amount = canon.decimal(2)(body.amount, "amount");
      if (state.refunds.some((r) => r.order_id === body.order_id && r.amount === amount)) {
        const answer = { status: 400, body: { error: "charge already refunded" } };
        byKey.set(key, answer);
        return json(answer.status, answer.body);
      }
      state.refunds.push({ id: `re_${state.refunds.length + 1}`, order_id: body.order_id, amount });
      req.socket.resetAndDestroy(); // committed; the key write is lost and the answer never leaves
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  }) as KeyStoreRemote;
}

/** The keyed refund tool of {@link KeyStoreRemote}; its key probe reads the stored answer back. */
function keyStoreRefundTool(remote: KeyStoreRemote, extra: { resendWhenAbsent?: boolean } = {}): AnyTool {
  return defineTool({
    name: "issue_refund",
    kind: "idempotent_by_key",
    identity: { order_id: canon.upper, amount: canon.decimal(2) },
    timeoutMs: 500,
    ...extra,
    invoke: async (args, ctx) =>
      (await callHttp(ctx, { method: "POST", url: `${remote.url}/refunds`, body: args })).body,
    probe: async (_args, ctx) => {
      try {
        const stored = (await callHttp(ctx, { method: "GET", url: `${remote.url}/by-key/${ctx.clientRef}` })).body as {
          status: number;
          body: { error?: string };
        };
        return stored.status >= 400 ? refusedUnderKey(stored.body.error ?? "refused", stored.status) : stored.body;
      } catch (error) {
        if (isRejectedError(error) && error.httpStatus === 404) return null;
        throw error;
      }
    },
  });
}

describe("attack regressions: evidence and the human queue (real PostgreSQL)", () => {
  const cleanup = new Cleanup();
  let store: PrismaIntentStore;
  let ops: PrismaOperatorStore;
  let n = 0;

  beforeEach(async () => {
    ({ store, ops } = await freshStores(cleanup));
  });
  afterEach(() => cleanup.run());

  const inQueue = async (key: string) => (await ops.listNeedsHuman()).records.some((r) => r.key === key);
  const turn = () => Deadline.after(5000);

  describe("B1: a refused resend's answer read back under the key is no proof of no effect (rule 5f)", () => {
    async function refusedResend(extra: { resendWhenAbsent?: boolean } = {}) {
      const remote = cleanup.add(await startKeyStoreRemote(), (r) => r.close());
      const ex = timingExecutor(store, [keyStoreRefundTool(remote, extra)], { humanRecheckMs: HUMAN_RECHECK_MS });
      const input = { runId: `run-b1-${++n}`, stepId: "refund", tool: "issue_refund", args: refund(`A-${n}`) };
      const key = ex.keyFor(input);
      const first = await ex.call({ ...input, deadline: turn() });
      return { remote, ex, input, key, first };
    }

    /** The invariants after any path: one refund, two POSTs, the record UNKNOWN in the human queue. */
    async function expectStillInQueue(remote: KeyStoreRemote, key: string, code: string) {
      expect(remote.refunds).toHaveLength(1);
      expect(remote.posts).toBe(2); // the original and one resend; never a third
      const record = await mustGet(store, key);
      expect(shownRecord(record)).toMatchObject({ status: "UNKNOWN", needsHuman: true, resolution: "needs_human" });
      expect(record.error?.code).toBe(code);
      expect(await inQueue(key)).toBe(true);
      // The key probe did read the refusal back (the path under test ran).
      const answers = (await store.listEvents(key)).filter((e) => e.type === "probe").map((e) => e.data.answer);
      expect(answers).toContain("refused");
    }

    async function expectResendRefused(first: Awaited<ReturnType<typeof refusedResend>>["first"]) {
      expect(first).toMatchObject({
        status: "UNKNOWN",
        retry_safe: false,
        resolution: "needs_human",
        error: { code: "RESEND_REFUSED" },
      });
    }

    it("the agent's repeat call: told UNKNOWN (retry_safe false), the record stays in the human queue; 1 refund", async () => {
      const { remote, ex, input, key, first } = await refusedResend();
      await expectResendRefused(first);
      const again = await ex.call({ ...input, deadline: turn() });
      expect(again).toMatchObject({ status: "UNKNOWN", retry_safe: false, resolution: "needs_human" });
      await expectStillInQueue(remote, key, "RESEND_REFUSED");
    });

    it("the sweeper's re-check after humanRecheckMs: stays UNKNOWN in the human queue; 1 refund", async () => {
      const { remote, ex, key, first } = await refusedResend();
      await expectResendRefused(first);
      await sleepPast(legacyDeadline(await mustGet(store, key)));
      const swept = await sweepKey(store, ex, key);
      expect(swept, "the sweeper must re-check the record").toBeDefined();
      expect(swept?.envelope).toMatchObject({ status: "UNKNOWN", retry_safe: false, resolution: "needs_human" });
      await expectStillInQueue(remote, key, "RESEND_REFUSED");
    });

    it("abortRun: the step is not_confirmed and waits for a person (RUN_ABORTED); nothing compensated, 1 refund", async () => {
      const { remote, ex, input, key, first } = await refusedResend();
      await expectResendRefused(first);
      const report = await ex.abortRun(input.runId, turn());
      expect(report.steps.map((s) => [s.stepId, s.outcome])).toEqual([["refund", "not_confirmed"]]);
      expect(report).toMatchObject({ complete: false, needsHuman: 1 });
      await expectStillInQueue(remote, key, "RUN_ABORTED");
    });

    it("an operator's resend_same_key that the remote refuses, then the agent's repeat call: UNKNOWN in the human queue; 1 refund", async () => {
      const { remote, ex, input, key, first } = await refusedResend({ resendWhenAbsent: false });
      expect(first).toMatchObject({ status: "UNKNOWN", retry_safe: false, error: { code: "PROBES_ABSENT_NO_DEDUPE" } });
      expect(remote.posts).toBe(1);
      const before = await mustGet(store, key);
      const resent = await ex.resolve(
        {
          key,
          action: "resend_same_key",
          note: "the probes say absent; resend",
          expectedVersion: before.version,
          operatorActionId: randomUUID(),
          actor: ACTOR,
        },
        ops,
      );
      expect(resent.envelope).toMatchObject({ status: "UNKNOWN", error: { code: "RESEND_REFUSED" } });
      const again = await ex.call({ ...input, deadline: turn() });
      expect(again).toMatchObject({ status: "UNKNOWN", retry_safe: false, resolution: "needs_human" });
      await expectStillInQueue(remote, key, "RESEND_REFUSED");
    });
  });

  describe("B2: another step's identity match is not absence (rule 5g)", () => {
    for (const withRef of [true, false]) {
      // With effectRef the match is attributed to the other step ("other": the break); without it the
      // match is "ambiguous" (the control: it went to the human queue before the fix too).
      it(`two steps refunding 49.90 on one order (${withRef ? "effectRef → remoteId" : "control: no effectRef"}), unsafe, settleMs, identity probe only; step 2's answer is lost → human queue, re-checks included; 2 effects, never a third`, async () => {
        const remote = cleanup.add(await startFakeRemote({ honorsKey: false }), (r) => r.close());
        const tool = refundTool(remote, {
          kind: "unsafe",
          settleMs: 300,
          probe: undefined,
          timeoutMs: 500,
          ...(withRef ? { effectRef: (found: unknown) => ({ remoteId: (found as { id?: string })?.id ?? null }) } : {}),
        });
        const ex = timingExecutor(store, [tool], { humanRecheckMs: HUMAN_RECHECK_MS });
        const run = `run-b2-${++n}`;
        const steps = ["refund-1", "refund-2"].map((stepId) => ({
          runId: run,
          stepId,
          tool: "issue_refund",
          args: refund(`E-${n}`),
        }));
        // The first POST to arrive commits and answers; the second commits and its connection resets.
        remote.fault({ commitDelayMs: 50 }, { commitDelayMs: 100, answer: "reset" });
        const told = await Promise.all(steps.map((s) => ex.call({ ...s, deadline: turn() })));
        expect(told.map((e) => e.status).sort()).toEqual(["SUCCEEDED", "UNKNOWN"]);
        const lost = steps[told.findIndex((e) => e.status === "UNKNOWN")]!;
        const key = ex.keyFor(lost);
        expect(told.find((e) => e.status === "UNKNOWN")).toMatchObject({ retry_safe: false });

        // Let every window pass and the sweeper go (also its human-queue re-checks): nothing is resent.
        for (let i = 0; i < 2; i++) {
          const record = await mustGet(store, key);
          if (record.status !== "UNKNOWN") break;
          await sleepPast(Math.min(legacyDeadline(record), Date.now() + 1000));
          await sweepKey(store, ex, key);
        }
        expect(remote.effects).toHaveLength(2);
        expect(remote.posts).toBe(2);
        const record = await mustGet(store, key);
        expect(record).toMatchObject({ status: "UNKNOWN", needsHuman: true, attempt: 1 });
        expect(record.error?.code).toBe("AMBIGUOUS_IDENTITY_MATCH");
        expect(await inQueue(key)).toBe(true);
      });
    }
  });

  describe("B4: abortRun on an UNKNOWN whose absence is not conclusive yet (rule 6)", () => {
    async function abortedUnknown(remote: FakeRemote, tag: string) {
      const cancels = cleanup.add(await startFakeRemote({ honorsKey: true }), (r) => r.close());
      const cancel = defineTool({
        name: "cancel_refund",
        kind: "idempotent_by_key",
        identity: { refund_id: canon.exact },
        timeoutMs: 500,
        invoke: async (a, ctx) =>
          (await callHttp(ctx, { method: "POST", url: `${cancels.url}/effects`, body: a })).body,
      });
      // The settle window (1 s after the answer) outlasts the abort's own reconciliation.
      const tool = refundTool(remote, {
        kind: "unsafe",
        settleMs: 1000,
        probe: undefined,
        timeoutMs: 500,
        compensation: {
          tool: "cancel_refund",
          args: (_a: unknown, r: unknown) => ({ refund_id: (r as { id: string }).id }),
        },
      });
      const ex: Executor = timingExecutor(store, [tool, cancel], { humanRecheckMs: HUMAN_RECHECK_MS });
      const input = { runId: `run-b4-${tag}-${++n}`, stepId: "refund", tool: "issue_refund", args: refund(`I-${n}`) };
      const key = ex.keyFor(input);
      const told = await ex.call({ ...input, deadline: Deadline.after(1000) });
      expect(told).toMatchObject({ status: "UNKNOWN", retry_safe: false, error: { code: "ABSENCE_NOT_CONCLUSIVE" } });
      expect((await mustGet(store, key)).needsHuman).toBe(false);

      const report = await ex.abortRun(input.runId, turn());
      expect(report.steps.map((s) => [s.stepId, s.outcome])).toEqual([["refund", "not_confirmed"]]);
      expect(report).toMatchObject({ complete: false, needsHuman: 1 });
      const waiting = await mustGet(store, key);
      expect(shownRecord(waiting)).toMatchObject({ status: "UNKNOWN", needsHuman: true, resolution: "needs_human" });
      expect(waiting.error?.code).toBe("RUN_ABORTED");
      expect(await inQueue(key)).toBe(true);
      return { ex, key, cancels, settlesAt: waiting.settlesAtEpochMs };
    }

    it("the refund took effect (lookups lag 800 ms): the sweeper finds it → SUCCEEDED and, its run being aborted, it is compensated once on its own (rule 13, issue 20 §1); never resent; an operator's compensate then replays", async () => {
      const remote = cleanup.add(await startFakeRemote({ honorsKey: false }), (r) => r.close());
      remote.fault({ answer: "reset", visibleAfterMs: 800 });
      const { ex, key, cancels } = await abortedUnknown(remote, "found");

      for (let i = 0; i < 6; i++) {
        const record = await mustGet(store, key);
        if (record.status !== "UNKNOWN") break;
        await sleepPast(Math.min(legacyDeadline(record), Date.now() + 1000));
        await sweepKey(store, ex, key);
      }
      await ex.undosDone();
      const found = await mustGet(store, key);
      expect(found).toMatchObject({ status: "SUCCEEDED", resolution: "found", needsHuman: false });
      expect(found.result).toMatchObject({ id: remote.effects[0]!.id });
      expect(remote.effects).toHaveLength(1);
      expect(remote.posts).toBe(1);
      // Compensated once, without anyone aborting again; out of the human queue.
      expect(cancels.effects.map((e) => e.body)).toEqual([{ refund_id: remote.effects[0]!.id }]);
      expect(await inQueue(key)).toBe(false);

      const result = await ex.resolve(
        {
          key,
          action: "compensate",
          note: "the run was aborted; undo the refund",
          expectedVersion: found.version,
          operatorActionId: randomUUID(),
          actor: ACTOR,
        },
        ops,
      );
      expect(result.envelope).toMatchObject({ status: "SUCCEEDED", replayed: true });
      expect(cancels.effects).toHaveLength(1); // the person's compensate replays the one already made
    });

    it("the refund never took effect: past its settle window the sweeper re-checks it but never resends (an aborted run's step); it waits for a person", async () => {
      const remote = cleanup.add(await startFakeRemote({ honorsKey: false }), (r) => r.close());
      remote.fault({ commit: false, answer: "reset" });
      const { ex, key, settlesAt } = await abortedUnknown(remote, "absent");
      expect(settlesAt).not.toBeNull();
      await sleepPast(settlesAt! + 50);
      for (let i = 0; i < 2; i++) {
        await sleepPast(legacyDeadline(await mustGet(store, key)));
        await sweepKey(store, ex, key);
        await sleep(20);
      }
      expect(remote.posts).toBe(1);
      expect(remote.effects).toHaveLength(0);
      const record = await mustGet(store, key);
      expect(record).toMatchObject({ status: "UNKNOWN", needsHuman: true, attempt: 1 });
      expect(record.error?.code).toBe("RUN_ABORTED");
      expect(await inQueue(key)).toBe(true);
    });
  });
});
