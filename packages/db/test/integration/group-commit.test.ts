/**
 * Group commit keeps every claim's semantics (real PostgreSQL). Batches of concurrent claims with
 * random conflicts (same key, same run/step/tool, both, across two tenants) are fired at once through
 * one store whose claims share multi-row statements; whatever the interleaving, exactly one claim wins
 * per key and per (tenant, run, step, tool), every loser gets a record it conflicts with, a claim's
 * events are written only when it inserted, and a claim resolves only once its record is committed.
 */
import type { ClaimResult, IntentEvent, NewIntentRecord } from "@tristate/core";
import fc from "fast-check";
import pg from "pg";
import { parseIntoClientConfig } from "pg-connection-string";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrismaIntentStore } from "../../src/prisma-intent-store.ts";
import { createTestDatabase, type TestDatabase } from "../../src/test-database.ts";

const specArb = fc.record({
  tenant: fc.constantFrom("default" as const, "acme" as const),
  key: fc.integer({ min: 0, max: 5 }),
  step: fc.integer({ min: 0, max: 5 }),
  delayMs: fc.constantFrom(0, 0, 0, 1, 2),
});

describe("group commit: concurrent claims with conflicts (real PostgreSQL)", () => {
  let db: TestDatabase;
  let store: PrismaIntentStore;
  let reader: pg.Client;
  let round = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    // Small batches and two in flight: conflicting claims are deferred, others queue behind a batch.
    store = new PrismaIntentStore({
      databaseUrl: db.url,
      poolSize: 8,
      groupCommit: { maxBatch: 5, maxInFlight: 2 },
      groupUpdates: { maxBatch: 5, maxInFlight: 2 },
    });
    reader = new pg.Client(parseIntoClientConfig(db.url));
    await reader.connect();
  });
  afterAll(async () => {
    await reader?.end();
    await store?.close();
    await db?.drop();
  });

  it("exactly one winner per key and per (tenant, run, step, tool); losers see it; events only for winners", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(specArb, { minLength: 1, maxLength: 24 }), async (specs) => {
        const run = `run-${++round}`;
        const now = Date.now();
        const claims = specs.map((s, i) => {
          const record: NewIntentRecord = {
            key: `${run}-k${s.key}`,
            runId: run,
            stepId: `step-${s.step}`,
            tool: "refund",
            args: { claim: i },
            identity: { order_id: `O-${i}` },
            attempt: 1,
            leaseUntilEpochMs: now + 60_000,
            compensation: null,
            createdAtEpochMs: now,
            traceId: `t-${i}`,
          };
          const events: IntentEvent[] = [
            { key: record.key, type: "created", atEpochMs: now, data: { claim: i } },
            { key: record.key, type: "sent", atEpochMs: now, data: { claim: i } },
          ];
          return { spec: s, record, events };
        });
        const results: ClaimResult[] = await Promise.all(
          claims.map(async ({ spec, record, events }) => {
            if (spec.delayMs > 0) await new Promise((r) => setTimeout(r, spec.delayMs));
            const result = await store.forTenant(spec.tenant).claim(record, events, now);
            if (result.claimed) {
              // Resolved means committed: another connection sees the record already.
              const seen = await reader.query("SELECT 1 FROM intent_records WHERE tenant = $1 AND key = $2", [
                spec.tenant,
                record.key,
              ]);
              expect(seen.rowCount).toBe(1);
            }
            return result;
          }),
        );

        const { rows } = await reader.query<{ tenant: string; key: string; step_id: string; args: { claim: number } }>(
          "SELECT tenant, key, step_id, args FROM intent_records WHERE run_id = $1",
          [run],
        );
        const winners = results.flatMap((r, i) => (r.claimed ? [i] : []));
        expect(rows.length).toBe(winners.length);
        // One record per (tenant, key) and per (tenant, step) — the database's constraints — and each is a winner's.
        for (const row of rows) expect(winners).toContain(row.args.claim);
        for (const [i, r] of results.entries()) {
          const { spec, record } = claims[i]!;
          const mine = r.claimed ? r.record : r.existing;
          expect(mine.tenant).toBe(spec.tenant);
          expect(mine.key === record.key || mine.stepId === record.stepId).toBe(true);
          if (r.claimed) {
            expect(mine).toMatchObject({ status: "PENDING", version: 1, args: { claim: i }, traceId: `t-${i}` });
          } else {
            // The loser's record is a winner's record as stored, not its own.
            expect((mine.args as { claim: number }).claim).not.toBe(i);
            expect(winners).toContain((mine.args as { claim: number }).claim);
          }
        }
        // Every event row belongs to the record's winner; two per winner, none from a loser.
        const events = await reader.query<{ tenant: string; key: string; data: { claim: number } }>(
          "SELECT e.tenant, e.key, e.data FROM intent_events e JOIN intent_records r USING (tenant, key) WHERE r.run_id = $1",
          [run],
        );
        expect(events.rowCount).toBe(2 * winners.length);
        for (const e of events.rows) {
          const row = rows.find((r) => r.tenant === e.tenant && r.key === e.key);
          expect(row?.args.claim).toBe(e.data.claim);
        }
      }),
      { numRuns: 40 },
    );
    // The property ran through real batches, not only one claim at a time.
    const stats = store.claimBatchStats!;
    expect(stats.claims).toBeGreaterThan(stats.batches);
  });

  it("grouped compare-and-sets: at most one winner per (record, version), versions count the winners, events only theirs", async () => {
    const opArb = fc.record({
      record: fc.integer({ min: 0, max: 3 }),
      expected: fc.integer({ min: 1, max: 3 }),
      withResult: fc.boolean(),
      durable: fc.boolean(),
      delayMs: fc.constantFrom(0, 0, 1),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 20 }), async (ops) => {
        const run = `cas-${++round}`;
        const now = Date.now();
        const keys = [0, 1, 2, 3].map((r) => `${run}-r${r}`);
        for (const [r, key] of keys.entries()) {
          const record: NewIntentRecord = {
            key,
            runId: run,
            stepId: `s-${r}`,
            tool: "refund",
            args: {},
            identity: {},
            attempt: 1,
            leaseUntilEpochMs: now + 60_000,
            compensation: null,
            createdAtEpochMs: now,
            traceId: null,
          };
          expect((await store.claim(record, [], now)).claimed).toBe(true);
        }
        const results = await Promise.all(
          ops.map(async (op, i) => {
            if (op.delayMs > 0) await new Promise((r) => setTimeout(r, op.delayMs));
            const key = keys[op.record]!;
            return store.update(
              key,
              op.expected,
              { status: "UNKNOWN", attempt: 100 + i, ...(op.withResult ? { result: null } : {}) },
              [{ key, type: "sweep", atEpochMs: now, data: { op: i } }],
              now,
              { durable: op.durable },
            );
          }),
        );
        for (const [r, key] of keys.entries()) {
          const won = ops.flatMap((op, i) => (op.record === r && results[i] ? [i] : []));
          const versions = won.map((i) => ops[i]!.expected);
          expect(new Set(versions).size).toBe(versions.length); // one winner per (record, version)
          for (const i of won) expect(results[i]).toMatchObject({ version: ops[i]!.expected + 1, attempt: 100 + i });
          const { rows } = await reader.query<{ version: number; attempt: number }>(
            "SELECT version, attempt FROM intent_records WHERE tenant = 'default' AND key = $1",
            [key],
          );
          expect(rows[0]!.version).toBe(1 + won.length);
          const events = await reader.query<{ data: { op: number } }>(
            "SELECT data FROM intent_events WHERE tenant = 'default' AND key = $1 AND type = 'sweep' ORDER BY id",
            [key],
          );
          expect(events.rows.map((e) => e.data.op).sort((a, b) => a - b)).toEqual([...won].sort((a, b) => a - b));
        }
      }),
      { numRuns: 40 },
    );
    const stats = store.updateBatchStats!;
    expect(stats.claims).toBeGreaterThan(stats.batches);
  });

  it("a claim the database refuses fails alone; the others of its batch still commit", async () => {
    const now = Date.now();
    const make = (i: number, type: string): [NewIntentRecord, IntentEvent[]] => {
      const record: NewIntentRecord = {
        key: `bad-batch-${i}`,
        runId: "bad-batch",
        stepId: `s-${i}`,
        tool: "refund",
        args: {},
        identity: {},
        attempt: 1,
        leaseUntilEpochMs: now + 60_000,
        compensation: null,
        createdAtEpochMs: now,
        traceId: null,
      };
      return [record, [{ key: record.key, type: type as IntentEvent["type"], atEpochMs: now, data: {} }]];
    };
    const settled = await Promise.allSettled(
      [0, 1, 2, 3, 4, 5].map((i) => store.claim(...make(i, i === 3 ? "no_such_event_type" : "created"), now)),
    );
    expect(settled.map((s) => s.status)).toEqual([
      "fulfilled",
      "fulfilled",
      "fulfilled",
      "rejected",
      "fulfilled",
      "fulfilled",
    ]);
    const { rows } = await reader.query("SELECT key FROM intent_records WHERE run_id = 'bad-batch' ORDER BY key");
    expect(rows.map((r) => r.key)).toEqual(["bad-batch-0", "bad-batch-1", "bad-batch-2", "bad-batch-4", "bad-batch-5"]);
  });
});
