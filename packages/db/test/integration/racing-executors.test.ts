/**
 * Rule 7 across processes: several executors — separate Node processes, each with its own pools —
 * make the same call (run, step, tool, args) at the same moment against a remote that holds its
 * response ~300 ms. The unique key and the atomic claim in PostgreSQL let exactly one of them send.
 */
import type { Envelope } from "@tristate/core";
import { type FakeRemote, startFakeRemote } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { createTestDatabase, type TestDatabase } from "../../src/test-database.ts";
import { Cleanup, spawnChild } from "./helpers.ts";

const HOLD_MS = 300;
const ARGS = { order_id: "B-2001", amount: "12.50", currency: "EUR", reason: "late delivery" };

describe("racing executors: separate processes, one key, one effect (real PostgreSQL)", () => {
  const cleanup = new Cleanup();
  let db: TestDatabase;
  let remote: FakeRemote;
  let store: PrismaIntentStore;

  beforeEach(async () => {
    db = cleanup.add(await createTestDatabase(), (d) => d.drop());
    remote = cleanup.add(await startFakeRemote(), (r) => r.close());
    store = cleanup.add(new PrismaIntentStore({ databaseUrl: db.url, poolSize: 2 }), (s) => s.close());
  });
  afterEach(() => cleanup.run());

  for (const n of [2, 4]) {
    it(`${n} processes call the same step at once: one POST, one fresh SUCCEEDED, the others in flight or replayed`, async () => {
      // Every POST is held, so a duplicate send (the bug under test) could not hide behind a fast answer.
      remote.fault(...Array.from({ length: n }, () => ({ respondDelayMs: HOLD_MS })));
      const children = Array.from({ length: n }, () =>
        cleanup.add(
          spawnChild("none", {
            databaseUrl: db.url,
            remoteUrl: remote.url,
            runId: "run-race",
            stepId: "step-1",
            args: ARGS,
            leaseMs: 5000,
            waitForGo: true,
          }),
          (c) => c.kill(),
        ),
      );
      // Every child has its executor built and its pool connected before any of them starts.
      await Promise.all(children.map((c) => c.next("ready")));
      for (const c of children) c.go();

      const envelopes: Envelope[] = [];
      for (const c of children) {
        const line = await c.next("envelope");
        const exit = await c.exited;
        expect(exit, c.stderr()).toEqual({ code: 0, signal: null });
        envelopes.push(line.envelope);
      }
      console.log(
        `racing ${n}: ${envelopes.map((e) => `${e.status}${e.replayed ? "/replayed" : ""}${e.error ? `/${e.error.code}` : ""}`).join(", ")}`,
      );

      // One effect, one POST.
      expect(remote.posts).toBe(1);
      expect(remote.effects).toHaveLength(1);

      const key = envelopes[0]!.idempotency_key;
      expect(envelopes.every((e) => e.idempotency_key === key)).toBe(true);
      expect(remote.keysSeen).toEqual([key]);

      // Exactly one child sent and got a fresh SUCCEEDED.
      const fresh = envelopes.filter((e) => !e.replayed);
      expect(fresh).toHaveLength(1);
      expect(fresh[0]).toMatchObject({ status: "SUCCEEDED", retry_safe: true, attempt: 1 });
      expect(fresh[0]!.result).toMatchObject({ id: remote.effects[0]!.id, clientRef: key });

      // The others: UNKNOWN in flight (rule 2), or a replayed SUCCEEDED if they came after the winner.
      for (const e of envelopes.filter((x) => x.replayed)) {
        if (e.status === "UNKNOWN") {
          expect(e).toMatchObject({ retry_safe: false, error: { code: "IN_FLIGHT" }, attempt: 1 });
        } else {
          expect(e).toMatchObject({ status: "SUCCEEDED", retry_safe: true, attempt: 1 });
          expect(e.result).toEqual(fresh[0]!.result);
        }
      }

      // One record, settled once; the losers wrote nothing.
      expect(await store.prisma.intentRecord.count()).toBe(1);
      expect(await store.get(key)).toMatchObject({ status: "SUCCEEDED", attempt: 1, resolution: null, version: 2 });
      expect((await store.listEvents(key)).map((e) => e.type)).toEqual(["created", "sent", "outcome"]);
    });
  }
});
