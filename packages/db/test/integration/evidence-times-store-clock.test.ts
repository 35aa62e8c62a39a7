/**
 * Issue 21 §6 — one clock for every time that decides evidence (DESIGN.md rule 9), on the real
 * PostgreSQL against a real loopback remote: replicas whose clocks run a minute ahead of the
 * database's or a second behind it. Each comparison is judged by the database's clock:
 *
 * - key retention in reconciliation (is a key probe's "absent" still proof, may a same-key resend
 *   rely on the remote's dedupe?) and in `probe.rerun`'s `keyExpired`;
 * - confirmation expiry (a token is stamped and checked by the database's clock);
 * - the archive's cut (records past `archiveAfterMs` by the database's clock, none earlier).
 *
 * Records are made older with SQL (`created_at`, `updated_at`), never by waiting.
 */
import { randomUUID } from "node:crypto";
import { type AnyTool, createConfirmationTokens, Deadline, type Executor } from "@tristate/core";
import { type FakeRemote, refundTool, startFakeRemote } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { archiveIntents } from "../../src/rollups/archive-intents.ts";
import { archiveCutEpochMs } from "../../src/rollups/read-model-loop.ts";
import { Cleanup } from "./helpers.ts";
import { freshStores, mustGet, refund, skewedClock, timingExecutor } from "./reconciliation-timing.support.ts";

const AHEAD_MS = 60_000;
const BEHIND_MS = -1_000;

describe("times that decide evidence are judged by the database's clock (real PostgreSQL)", () => {
  const cleanup = new Cleanup();
  let store: PrismaIntentStore;
  let remote: FakeRemote;
  let n = 0;

  beforeEach(async () => {
    ({ store } = await freshStores(cleanup));
    remote = cleanup.add(await startFakeRemote({ honorsKey: true }), (r) => r.close());
  });
  afterEach(() => cleanup.run());

  /** A keyed refund found only by its key (no identity probe), remembered `keyRetentionMs` by its remote. */
  const keyedRefund = (keyRetentionMs: number, extra: Partial<Parameters<typeof refundTool>[1]> = {}): AnyTool =>
    refundTool(remote, { probeByIdentity: undefined, keyRetentionMs, ...extra });
  const input = (tag: string) => ({
    runId: `run-${tag}-${++n}`,
    stepId: "refund",
    tool: "issue_refund",
    args: refund(`${tag}-${n}`),
  });
  const call = (ex: Executor, i: ReturnType<typeof input>, token?: string) =>
    ex.call({ ...i, deadline: Deadline.after(5_000), ...(token ? { confirmationToken: token } : {}) });
  /** Makes a record `ageMs` old by the database's clock. */
  const age = (key: string, ageMs: number) =>
    store.prisma
      .$executeRaw`UPDATE intent_records SET created_at = clock_timestamp() - make_interval(secs => ${ageMs / 1000}::float8), updated_at = clock_timestamp() - make_interval(secs => ${ageMs / 1000}::float8) WHERE key = ${key}`;

  describe("key retention in reconciliation", () => {
    it(`a replica ${AHEAD_MS} ms ahead: a fresh record's key is still remembered → absent → resent with the same key, one effect`, async () => {
      const ex = timingExecutor(store, [keyedRefund(30_000)], { clock: skewedClock(AHEAD_MS) });
      remote.fault({ commit: false, answer: "reset" });
      const env = await call(ex, input("ahead"));
      expect(env).toMatchObject({ status: "SUCCEEDED", resolution: "absent_resent" });
      expect(remote.keysSeen).toEqual([env.idempotency_key, env.idempotency_key]);
      expect(remote.effects).toHaveLength(1);
    });

    it(`a replica ${-BEHIND_MS} ms behind: a record past key retention → its key probe's "absent" proves nothing → a person, nothing resent`, async () => {
      const ex = timingExecutor(store, [keyedRefund(2_000)], { clock: skewedClock(BEHIND_MS) });
      const i = input("behind");
      remote.probesFail = true; // the first reconciliation learns nothing: UNKNOWN
      remote.fault({ commit: false, answer: "reset" });
      const first = await call(ex, i);
      expect(first).toMatchObject({ status: "UNKNOWN" });
      await age(first.idempotency_key, 2_500); // past retention by the database's clock, within it by the replica's
      remote.probesFail = false;
      const repeat = await call(ex, i);
      expect(repeat).toMatchObject({ status: "UNKNOWN", error: { code: "KEY_RETENTION_EXPIRED" } });
      expect((await mustGet(store, first.idempotency_key)).needsHuman).toBe(true);
      expect(remote.posts).toBe(1); // never resent under a key the remote may have forgotten
      expect(remote.effects).toHaveLength(0);
    });
  });

  describe("a human-queue record's re-check time", () => {
    const HUMAN_RECHECK_MS = 30_000;
    /** A record sent to a person on its first reconciliation (its key expired at once: 1 ms retention). */
    async function queued(offsetMs: number) {
      const ex = timingExecutor(store, [keyedRefund(1)], {
        clock: skewedClock(offsetMs),
        humanRecheckMs: HUMAN_RECHECK_MS,
      });
      remote.fault({ commit: false, answer: "reset" });
      const before = await store.clockEpochMs();
      const env = await call(ex, input(`recheck${offsetMs}`));
      const after = await store.clockEpochMs();
      expect(env).toMatchObject({ status: "UNKNOWN", error: { code: "KEY_RETENTION_EXPIRED" } });
      return { recheck: (await mustGet(store, env.idempotency_key)).recheckAtEpochMs!, before, after };
    }

    it(`is counted from the database's clock: a replica ${AHEAD_MS} ms ahead does not put it off a minute, one ${-BEHIND_MS} ms behind does not bring it forward`, async () => {
      for (const offset of [AHEAD_MS, BEHIND_MS]) {
        const { recheck, before, after } = await queued(offset);
        expect(recheck).toBeGreaterThanOrEqual(before + HUMAN_RECHECK_MS);
        expect(recheck).toBeLessThanOrEqual(after + HUMAN_RECHECK_MS);
      }
    });
  });

  describe("probe.rerun's keyExpired", () => {
    it(`a replica ${AHEAD_MS} ms ahead reports a fresh record's key unexpired; one ${-BEHIND_MS} ms behind reports an old one expired`, async () => {
      const tool = keyedRefund(30_000);
      remote.fault({ commit: true, answer: "respond" });
      const settled = await call(timingExecutor(store, [tool]), input("rerun"));
      const ahead = await timingExecutor(store, [tool], { clock: skewedClock(AHEAD_MS) }).rerunProbes(
        settled.idempotency_key,
      );
      expect(ahead.keyExpired).toBe(false);
      expect(ahead.probes[0]).toMatchObject({ answer: "found", absenceCounts: true });

      await age(settled.idempotency_key, 30_500);
      const behind = await timingExecutor(store, [tool], { clock: skewedClock(BEHIND_MS) }).rerunProbes(
        settled.idempotency_key,
      );
      expect(behind.keyExpired).toBe(true);
    });
  });

  describe("confirmation expiry", () => {
    const tokens = createConfirmationTokens(randomUUID());
    const confirmed = () => keyedRefund(86_400_000, { confirmation: () => "refunds need a person's confirmation" });

    it(`a replica ${AHEAD_MS} ms ahead accepts a token with 30 s left by the database's clock; the refund is sent once`, async () => {
      const ex = timingExecutor(store, [confirmed()], { clock: skewedClock(AHEAD_MS), confirmations: tokens });
      const i = input("tok-ahead");
      const token = tokens.issue(ex.confirmationFor(i).subject, await store.clockEpochMs(), 30_000);
      expect(await call(ex, i, token)).toMatchObject({ status: "SUCCEEDED" });
      expect(remote.effects).toHaveLength(1);
    });

    it(`a replica ${-BEHIND_MS} ms behind refuses a token that expired 500 ms ago by the database's clock; nothing sent`, async () => {
      const ex = timingExecutor(store, [confirmed()], { clock: skewedClock(BEHIND_MS), confirmations: tokens });
      const i = input("tok-behind");
      const token = tokens.issue(ex.confirmationFor(i).subject, (await store.clockEpochMs()) - 30_500, 30_000);
      expect(await call(ex, i, token)).toMatchObject({
        status: "FAILED_NO_EFFECT",
        error: { code: "CONFIRMATION_REQUIRED" },
      });
      expect(remote.posts).toBe(0);
    });
  });

  describe("the archive's cut", () => {
    const archived = async (key: string) =>
      Number(
        (
          await store.prisma.$queryRaw<
            { n: bigint }[]
          >`SELECT count(*) AS n FROM intent_records_archive WHERE key = ${key}`
        )[0]?.n,
      );
    /** Two settled records, `oldMs` and `youngMs` old by the database's clock. */
    async function settledPair(oldMs: number, youngMs: number) {
      const ex = timingExecutor(store, [keyedRefund(86_400_000)]);
      const old = await call(ex, input("old"));
      const young = await call(ex, input("young"));
      expect([old.status, young.status]).toEqual(["SUCCEEDED", "SUCCEEDED"]);
      await age(old.idempotency_key, oldMs);
      await age(young.idempotency_key, youngMs);
      return { old: old.idempotency_key, young: young.idempotency_key };
    }
    const archiveWithReplicaClock = async (offsetMs: number, archiveAfterMs: number) => {
      const real = Date.now.bind(Date);
      const spy = vi.spyOn(Date, "now").mockImplementation(() => real() + offsetMs);
      try {
        return await archiveIntents(store.prisma, {
          olderThanEpochMs: await archiveCutEpochMs(store.prisma, archiveAfterMs),
        });
      } finally {
        spy.mockRestore();
      }
    };

    it(`a replica ${AHEAD_MS} ms ahead archives only what is past archiveAfterMs by the database's clock`, async () => {
      const { old, young } = await settledPair(40_000, 20_000);
      await archiveWithReplicaClock(AHEAD_MS, 30_000);
      expect(await archived(old)).toBe(1);
      expect(await archived(young)).toBe(0);
    });

    it(`a replica ${-BEHIND_MS} ms behind archives a record 500 ms past archiveAfterMs by the database's clock`, async () => {
      const { old, young } = await settledPair(30_500, 20_000);
      await archiveWithReplicaClock(BEHIND_MS, 30_000);
      expect(await archived(old)).toBe(1);
      expect(await archived(young)).toBe(0);
    });
  });
});
