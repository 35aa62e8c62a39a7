/**
 * Sweepers cooperate through the database: three sweepers (three executors, three stores, three pools)
 * run passes at the same time over ~40 stale PENDING records. `claimStale`'s row locks
 * (`FOR UPDATE SKIP LOCKED`) and the lease it sets give each record to exactly one of them, and every
 * record ends SUCCEEDED with exactly one effect at the remote.
 */
import {
  canonicalIdentity,
  createExecutor,
  type Envelope,
  idempotencyKey,
  type NewIntentRecord,
  type SweepReport,
  sweepStale,
} from "@tristate/core";
import { type FakeRemote, refundTool, startFakeRemote } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { createTestDatabase, type TestDatabase } from "../../src/test-database.ts";
import { Cleanup } from "./helpers.ts";

const RECORDS = 40;
const SWEEPERS = 3;

/**
 * How each sweeper runs: one pass whose limit lets the three passes cover every record between them
 * (so nothing is left whatever the interleaving), or repeated small passes until one takes nothing.
 */
const MODES = [
  { name: "one concurrent pass each", limit: Math.ceil(RECORDS / SWEEPERS), untilDry: false },
  { name: "passes of 5 until dry", limit: 5, untilDry: true },
] as const;

/** Where the record's effect already is at the remote before the sweep (the orphan's send landed). */
type Landed = "none" | "with-key" | "without-key";

describe("sweepers cooperate: three concurrent sweepers on one database (real PostgreSQL)", () => {
  const cleanup = new Cleanup();
  let db: TestDatabase;
  let remote: FakeRemote;

  beforeEach(async () => {
    db = cleanup.add(await createTestDatabase(), (d) => d.drop());
    remote = cleanup.add(await startFakeRemote(), (r) => r.close());
  });
  afterEach(() => cleanup.run());

  for (const mode of MODES) {
    it(`${RECORDS} stale PENDING records, ${SWEEPERS} sweepers (${mode.name}): each record taken once, all SUCCEEDED, one effect each`, async () => {
      const tool = refundTool(remote);
      const stores = Array.from({ length: SWEEPERS }, () =>
        cleanup.add(new PrismaIntentStore({ databaseUrl: db.url, poolSize: 3 }), (s) => s.close()),
      );
      const [setup] = stores as [PrismaIntentStore];

      // Orphans of crashed executors: PENDING, deadlines (leases) long past. Every other one's send had
      // landed at the remote (half of those with the Idempotency-Key — found by the key probe — half
      // without — found only by the identity probe); the rest never reached it.
      const now = Date.now();
      const landedOf = (i: number): Landed => (i % 2 === 1 ? "none" : i % 4 === 0 ? "with-key" : "without-key");
      const records = new Map<string, { i: number; orderId: string; landed: Landed }>();
      for (let i = 0; i < RECORDS; i++) {
        const args = { order_id: `S-${1000 + i}`, amount: "10.00", currency: "EUR" };
        const identity = canonicalIdentity(args, tool.identity);
        const record: NewIntentRecord = {
          key: idempotencyKey("run-sweep", `step-${i}`, tool.name, identity),
          runId: "run-sweep",
          stepId: `step-${i}`,
          tool: tool.name,
          args,
          identity,
          attempt: 1,
          leaseUntilEpochMs: now - 30_000 + i,
          compensation: null,
          createdAtEpochMs: now - 60_000 + i,
          traceId: null,
        };
        const claim = await setup.claim(
          record,
          [{ key: record.key, type: "created", atEpochMs: record.createdAtEpochMs, data: {} }],
          record.createdAtEpochMs,
        );
        expect(claim.claimed).toBe(true);
        records.set(record.key, { i, orderId: args.order_id, landed: landedOf(i) });
        if (landedOf(i) !== "none") {
          const res = await fetch(`${remote.url}/effects`, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              ...(landedOf(i) === "with-key" ? { "idempotency-key": record.key } : {}),
            },
            body: JSON.stringify(args),
          });
          expect(res.status).toBe(201);
        }
      }
      const landed = [...records.values()].filter((r) => r.landed !== "none").length;
      expect(remote.effects).toHaveLength(landed);
      const postsBefore = remote.posts;

      // Warm every pool, so that no sweeper starts late because it is still connecting.
      await Promise.all(stores.map((s) => s.get("0".repeat(32))));

      const sweep = async (store: PrismaIntentStore): Promise<SweepReport[]> => {
        const executor = createExecutor({ store, tools: [refundTool(remote)], probe: { spacingMs: 100 } });
        const reports: SweepReport[] = [];
        for (;;) {
          const report = await sweepStale({ store, executor, limit: mode.limit });
          if (report.taken > 0) reports.push(report);
          if (report.taken === 0 || !mode.untilDry) return reports;
        }
      };
      const started = Date.now();
      const bySweeper = await Promise.all(stores.map(sweep));
      const elapsedMs = Date.now() - started;

      // Every record was taken by exactly one sweeper, once.
      const takenBy = new Map<string, number[]>();
      bySweeper.forEach((reports, sweeper) => {
        for (const report of reports) {
          expect(report.results).toHaveLength(report.taken);
          for (const r of report.results) takenBy.set(r.key, [...(takenBy.get(r.key) ?? []), sweeper]);
        }
      });
      console.log(
        `sweepers: ${bySweeper.map((reports, s) => `#${s} took ${reports.reduce((n, r) => n + r.taken, 0)} in ${reports.length} passes`).join(", ")}; ${elapsedMs} ms`,
      );
      expect([...takenBy.keys()].sort()).toEqual([...records.keys()].sort());
      const twice = [...takenBy].filter(([, sweepers]) => sweepers.length !== 1);
      expect(twice, "keys taken by more than one sweeper (or more than once)").toEqual([]);
      // They shared the work: each one took some.
      for (const reports of bySweeper) expect(reports.length).toBeGreaterThan(0);

      // Every record ends SUCCEEDED: found when its effect had landed, else resent once with the same key.
      const envelopes = new Map<string, Envelope>();
      for (const reports of bySweeper)
        for (const report of reports)
          for (const r of report.results) {
            expect(r.error, `sweeper error for ${r.key}`).toBeUndefined();
            envelopes.set(r.key, r.envelope!);
          }
      for (const [key, { orderId, landed: where }] of records) {
        const resolution = where === "none" ? "absent_resent" : "found";
        const attempt = where === "none" ? 2 : 1;
        expect(envelopes.get(key), key).toMatchObject({ status: "SUCCEEDED", resolution, attempt, replayed: false });
        expect(await setup.get(key), key).toMatchObject({
          status: "SUCCEEDED",
          resolution,
          attempt,
          needsHuman: false,
        });

        // One effect per record.
        expect(
          remote.effects.filter((e) => e.body.order_id === orderId),
          orderId,
        ).toHaveLength(1);

        // One lease_expired (one sweeper took it), no second sweep, at most one resend.
        const types = (await setup.listEvents(key)).map((e) => e.type);
        expect(
          types.filter((t) => t === "lease_expired"),
          key,
        ).toHaveLength(1);
        expect(
          types.filter((t) => t === "sweep"),
          key,
        ).toHaveLength(0);
        expect(
          types.filter((t) => t === "resend"),
          key,
        ).toHaveLength(where === "none" ? 1 : 0);
      }

      expect(remote.effects).toHaveLength(RECORDS);
      // Resends only for the records whose effect never landed, each with its own key.
      const resent = [...records.values()].filter((r) => r.landed === "none").length;
      expect(remote.posts - postsBefore).toBe(resent);
      expect(new Set(remote.keysSeen).size).toBe(remote.keysSeen.length);

      // Nothing is left for another pass.
      expect(
        await setup.claimStale({ nowEpochMs: Date.now(), limit: 100, leaseUntilEpochMs: Date.now() + 1000 }),
      ).toEqual([]);
      expect(await setup.prisma.intentRecord.count({ where: { status: { not: "SUCCEEDED" } } })).toBe(0);
    });
  }
});
