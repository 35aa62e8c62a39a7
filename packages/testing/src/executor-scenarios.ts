import { createServer } from "node:net";
import { type AnyTool, createExecutor, Deadline, type ExecutorOptions, type IntentStore } from "@tristate/core";
import { type FakeRemote, refundTool, startFakeRemote } from "@tristate/executor/demo-remotes";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { StoreUnderTest } from "./intent-store-contract.ts";

/**
 * The executor's behaviour against a real loopback remote with injected faults (issue 2, section 4),
 * run against any {@link IntentStore}: `MemoryIntentStore` in core's unit tests, `PrismaIntentStore`
 * on the real PostgreSQL in `@tristate/db`'s integration tests.
 */
export function describeExecutorScenarios(name: string, makeStore: () => Promise<StoreUnderTest>): void {
  describe(name, () => {
    let remote: FakeRemote;
    let store: IntentStore;
    let current: StoreUnderTest;

    beforeEach(async () => {
      remote = await startFakeRemote();
      current = await makeStore();
      store = current.store;
    });
    afterEach(async () => {
      await remote.close();
      await current.cleanup();
    });

    function executor(tools: AnyTool[] = [refundTool(remote)], options: Partial<ExecutorOptions> = {}) {
      return createExecutor({ store, tools, probe: { spacingMs: 100 }, ...options });
    }

    const refund = { order_id: "A-1182", amount: "49.90", currency: "EUR", reason: "arrived broken" };
    const call = (ex: ReturnType<typeof executor>, over: Record<string, unknown> = {}, budgetMs = 10_000) =>
      ex.call({
        runId: "run-7",
        stepId: "step-3",
        tool: "issue_refund",
        args: { ...refund, ...over },
        deadline: Deadline.after(budgetMs),
      });

    describe("executor.call: the three outcomes against a real loopback remote", () => {
      it("refund committed, then the response hangs: the probe finds it → SUCCEEDED, one effect", async () => {
        remote.fault({ answer: "hang" });
        const env = await call(executor());
        expect(env).toMatchObject({
          status: "SUCCEEDED",
          retry_safe: true,
          resolution: "found",
          attempt: 1,
          replayed: false,
        });
        expect(remote.effects).toHaveLength(1);
        expect(remote.posts).toBe(1);
        const rec = await store.get(env.idempotency_key);
        expect(rec?.status).toBe("SUCCEEDED");
        const types = (await store.listEvents(env.idempotency_key)).map((e) => e.type);
        expect(types).toEqual(["created", "sent", "outcome", "probe", "outcome"]);
      });

      it("504 after commit: UNKNOWN, the probe finds it → SUCCEEDED, one effect", async () => {
        remote.fault({ answer: 504 });
        const env = await call(executor());
        expect(env).toMatchObject({ status: "SUCCEEDED", resolution: "found" });
        expect(remote.effects).toHaveLength(1);
        expect(remote.posts).toBe(1);
      });

      it("writes visible only 1.5 s later: spaced probes find it, no resend", async () => {
        remote.fault({ answer: 504, visibleAfterMs: 1500 });
        const env = await call(createExecutor({ store, tools: [refundTool(remote)] }), {}, 20_000);
        expect(env).toMatchObject({ status: "SUCCEEDED", resolution: "found", attempt: 1 });
        expect(remote.posts).toBe(1);
        expect(remote.effects).toHaveLength(1);
        const probes = (await store.listEvents(env.idempotency_key)).filter((e) => e.type === "probe");
        expect(probes.some((p) => p.data.answer === "absent")).toBe(true);
        expect(probes.at(-1)?.data.answer).toBe("found");
      });

      it("request read, socket reset without commit: absent → resent once with the same key → one effect", async () => {
        remote.fault({ commit: false, answer: "reset" });
        const env = await call(executor());
        expect(env).toMatchObject({ status: "SUCCEEDED", resolution: "absent_resent", attempt: 2, retry_safe: true });
        expect(remote.posts).toBe(2);
        expect(remote.effects).toHaveLength(1);
        expect(new Set(remote.keysSeen)).toEqual(new Set([env.idempotency_key]));
        expect(remote.bodiesSeen[1]).toEqual(remote.bodiesSeen[0]);
      });

      it('rephrased arguments in one step (49.9 vs "49.90", extra reason, lower-case id) → replay, one effect', async () => {
        const ex = executor();
        const first = await call(ex);
        const second = await ex.call({
          runId: "run-7",
          stepId: "step-3",
          tool: "issue_refund",
          args: { order_id: "a-1182", amount: 49.9, currency: "EUR", reason: "customer asked again, politely" },
          deadline: Deadline.after(10_000),
        });
        expect(first).toMatchObject({ status: "SUCCEEDED", replayed: false });
        expect(second).toMatchObject({ status: "SUCCEEDED", replayed: true, idempotency_key: first.idempotency_key });
        expect(second.result).toEqual(first.result);
        expect(remote.posts).toBe(1);
        expect(remote.effects).toHaveLength(1);
      });

      it("two steps → two effects with two keys", async () => {
        const ex = executor();
        const a = await call(ex);
        const b = await ex.call({
          runId: "run-7",
          stepId: "step-4",
          tool: "issue_refund",
          args: refund,
          deadline: Deadline.after(10_000),
        });
        expect(a.status).toBe("SUCCEEDED");
        expect(b.status).toBe("SUCCEEDED");
        expect(a.idempotency_key).not.toBe(b.idempotency_key);
        expect(remote.effects).toHaveLength(2);
      });

      it("budget too small → FAILED_NO_EFFECT, nothing sent, nothing recorded", async () => {
        const env = await call(executor(), {}, 2500);
        expect(env).toMatchObject({
          status: "FAILED_NO_EFFECT",
          retry_safe: true,
          error: { code: "DEADLINE_EXCEEDED", field: "deadline" },
        });
        expect(remote.posts).toBe(0);
        expect(await store.get(env.idempotency_key)).toBeNull();
      });

      it("a deadline already past → FAILED_NO_EFFECT, nothing sent", async () => {
        const env = await executor().call({
          runId: "r",
          stepId: "s",
          tool: "issue_refund",
          args: refund,
          deadline: Deadline.at(Date.now() - 1000),
        });
        expect(env).toMatchObject({ status: "FAILED_NO_EFFECT", error: { code: "DEADLINE_EXCEEDED" } });
        expect(remote.posts).toBe(0);
      });

      it("refused port → FAILED_NO_EFFECT; the record says so (not PENDING)", async () => {
        const port = await freePort();
        const dead = { ...remote, url: `http://127.0.0.1:${port}` } as FakeRemote;
        const env = await call(executor([refundTool(dead)]));
        expect(env).toMatchObject({ status: "FAILED_NO_EFFECT", retry_safe: true, error: { code: "NOT_SENT" } });
        expect((await store.get(env.idempotency_key))?.status).toBe("FAILED_NO_EFFECT");
      });

      it("422 → FAILED_NO_EFFECT (the remote refused before work)", async () => {
        remote.fault({ commit: false, answer: 422 });
        const env = await call(executor());
        expect(env).toMatchObject({
          status: "FAILED_NO_EFFECT",
          retry_safe: true,
          error: { code: "REJECTED", httpStatus: 422 },
        });
        expect(remote.effects).toHaveLength(0);
      });

      it("FAILED_NO_EFFECT may be tried again: same key, attempt + 1", async () => {
        remote.fault({ commit: false, answer: 422 });
        const ex = executor();
        const first = await call(ex);
        const second = await call(ex);
        expect(first.status).toBe("FAILED_NO_EFFECT");
        expect(second).toMatchObject({ status: "SUCCEEDED", attempt: 2, idempotency_key: first.idempotency_key });
        expect(remote.effects).toHaveLength(1);
      });

      it("an unsafe tool timing out → UNKNOWN, retry_safe false, never resent on a repeat call", async () => {
        remote.fault({ answer: "hang" });
        const ex = executor([refundTool(remote, { kind: "unsafe", probe: undefined, probeByIdentity: undefined })]);
        const first = await call(ex);
        expect(first).toMatchObject({
          status: "UNKNOWN",
          retry_safe: false,
          resolution: "needs_human",
          error: { code: "NO_PROBE" },
        });
        for (let i = 0; i < 3; i++) {
          const again = await call(ex);
          expect(again).toMatchObject({ status: "UNKNOWN", retry_safe: false, replayed: true });
        }
        expect(remote.posts).toBe(1);
        expect(remote.effects).toHaveLength(1);
      });

      it("8 concurrent identical calls → one effect; the others answer UNKNOWN in flight or replay", async () => {
        remote.fault({ respondDelayMs: 200 });
        const ex = executor();
        const envs = await Promise.all(Array.from({ length: 8 }, () => call(ex)));
        expect(remote.posts).toBe(1);
        expect(remote.effects).toHaveLength(1);
        expect(envs.filter((e) => e.status === "SUCCEEDED" && !e.replayed)).toHaveLength(1);
        for (const e of envs.filter((x) => x.status !== "SUCCEEDED"))
          expect(e).toMatchObject({ status: "UNKNOWN", retry_safe: false });
        expect(new Set(envs.map((e) => e.idempotency_key)).size).toBe(1);
      });

      it("rule 4: the same step with a different identity is refused, nothing sent, record unchanged", async () => {
        const ex = executor();
        const first = await call(ex);
        const other = await call(ex, { amount: "70.00" });
        expect(other).toMatchObject({
          status: "FAILED_NO_EFFECT",
          retry_safe: false,
          error: { code: "IDEMPOTENCY_CONFLICT" },
        });
        expect(remote.posts).toBe(1);
        const rec = await store.get(first.idempotency_key);
        expect(rec).toMatchObject({ status: "SUCCEEDED", version: 2 });
      });

      it("a remote's 409 'in progress' stays UNKNOWN and is never a reason for a new key", async () => {
        const ex = executor([refundTool(remote, { probe: undefined, probeByIdentity: undefined })]);
        remote.fault({ commit: false, answer: 409 }, { commit: false, answer: 409 });
        const env = await call(ex);
        expect(env.status).toBe("UNKNOWN");
        expect(env.retry_safe).toBe(false);
        expect(new Set(remote.keysSeen)).toEqual(new Set([env.idempotency_key]));
        expect(remote.effects).toHaveLength(0);
      });

      it("a failing probe is no evidence: stays UNKNOWN, nothing resent", async () => {
        remote.fault({ commit: false, answer: "reset" });
        remote.probesFail = true;
        const env = await call(executor());
        expect(env).toMatchObject({ status: "UNKNOWN", retry_safe: false, error: { code: "RESET_AFTER_WRITE" } });
        expect(remote.posts).toBe(1);
        expect((await store.get(env.idempotency_key))?.needsHuman).toBe(false);
      });

      it("after key retention only the identity probe counts: key probe absent alone → human queue", async () => {
        let now = Date.now();
        const clock = {
          nowEpochMs: () => now,
          monotonicMs: () => performance.now(),
          sleep: (ms: number) => new Promise<void>((r) => setTimeout(r, ms)),
        };
        const tool = refundTool(remote, { probeByIdentity: undefined, keyRetentionMs: 60_000 });
        const ex = executor([tool], { clock });
        remote.fault({ commit: false, answer: "hang" });
        const first = await call(ex);
        // probes at once say absent; keyed tool within retention → resend succeeded
        expect(first).toMatchObject({ status: "SUCCEEDED", resolution: "absent_resent" });

        remote.fault({ commit: false, answer: "hang" }, { commit: false, answer: "hang" });
        // Key retention is judged by the store's clock where it has one (rule 9): a short retention,
        // passed in real time too, so the record is past it by every clock.
        const shortRetentionMs = 2500;
        const shortTool = refundTool(remote, { probeByIdentity: undefined, keyRetentionMs: shortRetentionMs });
        const ex2 = executor([shortTool], { clock, probe: { spacingMs: 100, timeoutMs: 300 } });
        const startedB = Date.now();
        const stepB = await ex2.call({
          runId: "run-7",
          stepId: "step-9",
          tool: "issue_refund",
          args: refund,
          deadline: Deadline.after(1800 + 2000),
        });
        expect(stepB.status).toBe("UNKNOWN");
        now += 2 * 60_000; // past retention by the executor's clock…
        await new Promise<void>((r) => setTimeout(r, Math.max(0, startedB + shortRetentionMs + 200 - Date.now()))); // …and by the store's
        const later = await ex2.call({
          runId: "run-7",
          stepId: "step-9",
          tool: "issue_refund",
          args: refund,
          deadline: Deadline.after(10_000),
        });
        expect(later).toMatchObject({
          status: "UNKNOWN",
          retry_safe: false,
          resolution: "needs_human",
          error: { code: "KEY_RETENTION_EXPIRED" },
        });
      });
    });

    describe("bad input: a FAILED_NO_EFFECT envelope naming the field and the rule; nothing sent, nothing written", () => {
      const cases: [string, Record<string, unknown>, string][] = [
        ["missing identity field", { order_id: undefined }, "order_id"],
        ["non-numeric amount", { amount: "forty" }, "amount"],
        ["non-finite amount", { amount: Number.POSITIVE_INFINITY }, "amount"],
        ["wrong type", { order_id: 42 }, "order_id"],
      ];
      for (const [name, over, field] of cases) {
        it(name, async () => {
          const env = await call(executor(), over);
          expect(env).toMatchObject({ status: "FAILED_NO_EFFECT", error: { code: "INVALID_ARGUMENTS", field } });
          expect(env.error?.rule).toBeTruthy();
          expect(remote.posts).toBe(0);
        });
      }

      it("unknown tool", async () => {
        const env = await executor().call({
          runId: "r",
          stepId: "s",
          tool: "issue_refnd",
          args: {},
          deadline: Deadline.after(10_000),
        });
        expect(env).toMatchObject({ status: "FAILED_NO_EFFECT", error: { code: "UNKNOWN_TOOL", field: "tool" } });
      });

      it("programmer errors throw typed errors", async () => {
        const ex = executor();
        await expect(
          ex.call({ runId: "", stepId: "s", tool: "issue_refund", args: refund, deadline: Deadline.after(5000) }),
        ).rejects.toThrow(/runId/);
        await expect(
          ex.call({
            runId: "r",
            stepId: "s",
            tool: "issue_refund",
            args: refund,
            deadline: 5000 as unknown as Deadline,
          }),
        ).rejects.toThrow(/deadline/);
      });
    });

    async function freePort(): Promise<number> {
      const srv = createServer();
      await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
      const { port } = srv.address() as { port: number };
      await new Promise<void>((r) => srv.close(() => r()));
      return port;
    }
  });
}
