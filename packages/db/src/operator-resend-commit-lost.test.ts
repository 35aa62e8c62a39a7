/**
 * An operator's `resend_same_key` whose COMMIT answer was lost (issue 21 §7), on PostgreSQL: the
 * audit row and the record's PENDING committed, the process was told the statement failed. The audit
 * log records only what happened: the resend its row names is sent (one effect at the remote, the
 * record settled `human_resent`); a change that did not commit leaves no row and sends nothing.
 */
import {
  createExecutor,
  Deadline,
  type Executor,
  type IntentRecord,
  type OperatorChange,
  type OperatorStore,
} from "@tristate/core";
import { type FakeRemote, refundTool, startFakeRemote } from "@tristate/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PrismaOperatorStore } from "./operator-store.ts";
import { PrismaIntentStore } from "./prisma-intent-store.ts";
import { createTestDatabase, type TestDatabase } from "./test-database.ts";

let db: TestDatabase;
let store: PrismaIntentStore;
let ops: PrismaOperatorStore;
let remote: FakeRemote;
let executor: Executor;
let n = 0;

beforeAll(async () => {
  db = await createTestDatabase();
  store = new PrismaIntentStore({ databaseUrl: db.url });
  ops = new PrismaOperatorStore(store.prisma);
  remote = await startFakeRemote();
  const tool = refundTool(remote, { kind: "unsafe", probe: undefined, probeByIdentity: undefined });
  executor = createExecutor({ store, tools: [tool], probe: { spacingMs: 0, attempts: 1 } });
});
afterAll(async () => {
  await remote?.close();
  await store?.close();
  await db?.drop();
});

/** A record in the human queue: the remote answered 504 and did nothing. */
async function waiting(): Promise<IntentRecord> {
  remote.fault({ answer: 504, commit: false });
  const env = await executor.call({
    runId: "run-resend-lost",
    stepId: `step-${++n}`,
    tool: "issue_refund",
    args: { order_id: `RL-${n}`, amount: "10.00", currency: "EUR" },
    deadline: Deadline.after(10_000),
  });
  expect(env).toMatchObject({ status: "UNKNOWN", resolution: "needs_human" });
  return (await store.get(env.idempotency_key))!;
}

/** The operator store, its change's COMMIT answer lost: committed (`committed`) or not, then an error. */
function losingCommit(committed: boolean): OperatorStore {
  return new Proxy(ops, {
    get(target, name, receiver) {
      if (name !== "applyOperatorAction") {
        const value = Reflect.get(target, name, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      }
      return async (change: OperatorChange) => {
        if (committed) await target.applyOperatorAction(change);
        throw new Error("Connection terminated unexpectedly");
      };
    },
  });
}

const resend = (record: IntentRecord, id: string) => ({
  key: record.key,
  action: "resend_same_key" as const,
  note: "the PSP shows nothing; resend",
  expectedVersion: record.version,
  operatorActionId: id,
  actor: { keyId: "key-ana", name: "ana" },
});

describe("resend_same_key whose COMMIT answer was lost", () => {
  it("committed: the resend the audit row names is sent, once; the record is settled human_resent", async () => {
    const record = await waiting();
    const before = remote.effects.length;
    const result = await executor.resolve(resend(record, `op-lost-${n}`), losingCommit(true));
    expect(result.record).toMatchObject({ status: "SUCCEEDED", resolution: "human_resent" });
    const audit = await ops.findAudit(`op-lost-${n}`);
    expect(audit).toMatchObject({ action: "resend_same_key", key: record.key });
    expect(remote.effects.length - before).toBe(1);
    expect((await store.get(record.key))?.status).toBe("SUCCEEDED");
  });

  it("not committed: the error, no audit row, nothing sent, the record still waits for a person", async () => {
    const record = await waiting();
    const before = remote.effects.length;
    await expect(executor.resolve(resend(record, `op-lost-${n}`), losingCommit(false))).rejects.toThrow(
      /Connection terminated/,
    );
    expect(await ops.findAudit(`op-lost-${n}`)).toBeNull();
    expect(remote.effects.length - before).toBe(0);
    expect(await store.get(record.key)).toMatchObject({ status: "UNKNOWN", needsHuman: true, version: record.version });
  });
});
