/**
 * Issue 21 §5 — found is not the same as succeeded (DESIGN.md rule 5a), on the real PostgreSQL with
 * declarative HTTP tools against a loopback remote that keeps declined charges. A keyed charge's 402
 * is lost; the remote holds a `failed` charge under the key and replays the 402 to a same-key
 * resend (Stripe's behaviour). The key probe finds the charge: with a declared `state` it reads it
 * (failed → FAILED_NO_EFFECT with the item as evidence, the agent told retry-safe; done or pending →
 * SUCCEEDED); without one it cannot tell, so the executor reads back the stored answer under the
 * same key (a keyed tool) or sends the record to a person (an unsafe one) — never SUCCEEDED.
 * Effects are counted at the remote.
 */
import { type AnyTool, createExecutor, Deadline, type Executor } from "@tristate/core";
import { createTestDatabase, PrismaIntentStore, type TestDatabase } from "@tristate/db";
import { type FakeRemote, startFakeRemote } from "@tristate/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildCatalog } from "../src/catalog/load.ts";

let db: TestDatabase;
let store: PrismaIntentStore;
let keyed: FakeRemote;
let unkeyed: FakeRemote;

beforeAll(async () => {
  db = await createTestDatabase();
  store = new PrismaIntentStore({ databaseUrl: db.url, poolSize: 4 });
  keyed = await startFakeRemote({ honorsKey: true });
  unkeyed = await startFakeRemote({ honorsKey: false });
});
afterAll(async () => {
  await keyed?.close();
  await unkeyed?.close();
  await store?.close();
  await db?.drop();
});

/** Stripe's Charge `status`, as the README declares it. */
const CHARGE_STATE = { field: "state", done: ["succeeded"], failed: ["failed"], pending: ["pending"] };

/** A declarative charge tool against `remote`; `state` is the key probe's (undefined: none declared). */
async function chargeTool(remote: FakeRemote, kind: "idempotent_by_key" | "unsafe", state?: unknown) {
  const [tool] = await buildCatalog({
    httpTools: [
      {
        name: `charge_${kind}_${state === undefined ? "unconfigured" : "stated"}`,
        kind,
        method: "POST",
        url: `${remote.url}/effects`,
        args: [
          { name: "order_id", type: "string" },
          { name: "amount", type: "string" },
        ],
        identity: { order_id: "upper", amount: "decimal:2" },
        timeoutMs: 1500,
        keyProbe: {
          url: `${remote.url}/effects?clientRef={key}`,
          found: { type: "non_empty_array" },
          ...(state === undefined ? {} : { state }),
        },
      },
    ],
  });
  return tool as AnyTool;
}

const executorFor = (tool: AnyTool): Executor =>
  createExecutor({ store, tools: [tool], probe: { attempts: 2, spacingMs: 0, timeoutMs: 2000 } });

let order = 0;
async function charge(ex: Executor, tool: AnyTool, orderId = `O-${++order}`) {
  const input = {
    runId: "run-charge",
    stepId: `charge-${orderId}`,
    tool: tool.name,
    args: { order_id: orderId, amount: "30.00" },
  };
  return ex.call({ ...input, deadline: Deadline.after(20_000) });
}

/** The remote's items for `order` in the given state. */
const items = (remote: FakeRemote, orderId: string, state: string) =>
  remote.effects.filter((e) => e.body.order_id === orderId && e.state === state);

/** The remote declines the charge (a `failed` item under the key, 402 stored) and the answer is lost. */
const DECLINED_ANSWER_LOST = { commit: true, state: "failed", storedStatus: 402, answer: "reset" } as const;

describe("a found item's state decides the outcome (declared state)", () => {
  it("the issue's scenario: a declined charge found under the key → FAILED_NO_EFFECT with the evidence, retry-safe; the retry charges once", async () => {
    const tool = await chargeTool(keyed, "idempotent_by_key", CHARGE_STATE);
    const ex = executorFor(tool);
    keyed.fault(DECLINED_ANSWER_LOST);
    const postsBefore = keyed.posts;
    const env = await charge(ex, tool, "DECL-1");
    expect(env).toMatchObject({ status: "FAILED_NO_EFFECT", retry_safe: true, error: { code: "REJECTED" } });
    expect(env.error?.message).toMatch(/state = "failed", a failed state/);
    expect(keyed.posts - postsBefore).toBe(1); // never resent
    expect(items(keyed, "DECL-1", "succeeded")).toHaveLength(0);
    const probe = (await store.listEvents(env.idempotency_key)).find((e) => e.type === "probe");
    expect(probe?.data).toMatchObject({ answer: "refused", evidence: { state: "failed", order_id: "DECL-1" } });

    // The agent acts on retry_safe: the next attempt travels under a key the remote has not answered.
    const retry = await charge(ex, tool, "DECL-1");
    expect(retry).toMatchObject({ status: "SUCCEEDED", attempt: 2 });
    expect(items(keyed, "DECL-1", "succeeded")).toHaveLength(1);
  });

  it("a done charge found under the key → SUCCEEDED found, sent once", async () => {
    const tool = await chargeTool(keyed, "idempotent_by_key", CHARGE_STATE);
    keyed.fault({ commit: true, answer: "reset" });
    const postsBefore = keyed.posts;
    const env = await charge(executorFor(tool), tool, "DONE-1");
    expect(env).toMatchObject({ status: "SUCCEEDED", resolution: "found", result: { state: "succeeded" } });
    expect(keyed.posts - postsBefore).toBe(1);
    expect(items(keyed, "DONE-1", "succeeded")).toHaveLength(1);
  });

  it("a pending charge found under the key → SUCCEEDED found (rule 5a: delivered and under way)", async () => {
    const tool = await chargeTool(unkeyed, "unsafe", CHARGE_STATE);
    unkeyed.fault({ commit: true, state: "pending", answer: "reset" });
    const env = await charge(executorFor(tool), tool, "PEND-1");
    expect(env).toMatchObject({ status: "SUCCEEDED", resolution: "found", result: { state: "pending" } });
    expect(unkeyed.effects.filter((e) => e.body.order_id === "PEND-1")).toHaveLength(1);
  });

  it("a state that is none of the declared values, on an unsafe tool → UNKNOWN for a person (FOUND_STATE_UNKNOWN)", async () => {
    const tool = await chargeTool(unkeyed, "unsafe", CHARGE_STATE);
    unkeyed.fault({ commit: true, state: "requires_action", answer: "reset" });
    const postsBefore = unkeyed.posts;
    const env = await charge(executorFor(tool), tool, "ODD-1");
    expect(env).toMatchObject({ status: "UNKNOWN", retry_safe: false, error: { code: "FOUND_STATE_UNKNOWN" } });
    expect(env.error?.message).toMatch(/state = "requires_action" is none of the key probe's declared states/);
    expect((await store.get(env.idempotency_key))?.needsHuman).toBe(true);
    expect(unkeyed.posts - postsBefore).toBe(1);
  });
});

describe("an unconfigured probe cannot tell: never SUCCEEDED from its find alone", () => {
  it("keyed tool, declined charge under the key → the same-key read-back replays the 402 → FAILED_NO_EFFECT, one item", async () => {
    const tool = await chargeTool(keyed, "idempotent_by_key");
    keyed.fault(DECLINED_ANSWER_LOST);
    const env = await charge(executorFor(tool), tool, "UNCONF-1");
    expect(env.status).not.toBe("SUCCEEDED");
    expect(env).toMatchObject({ status: "FAILED_NO_EFFECT", retry_safe: true, error: { code: "REJECTED" } });
    expect(env.error?.message).toMatch(/stored answer to this request, read back under the same key/);
    expect(keyed.effects.filter((e) => e.body.order_id === "UNCONF-1")).toHaveLength(1);
    expect(items(keyed, "UNCONF-1", "succeeded")).toHaveLength(0);
    const resend = (await store.listEvents(env.idempotency_key)).find((e) => e.type === "resend");
    expect(resend?.data).toMatchObject({ readBack: true });
  });

  it("keyed tool, done charge under the key → the read-back replays the 201 → SUCCEEDED found, one effect", async () => {
    const tool = await chargeTool(keyed, "idempotent_by_key");
    keyed.fault({ commit: true, answer: "reset" });
    const env = await charge(executorFor(tool), tool, "UNCONF-2");
    expect(env).toMatchObject({ status: "SUCCEEDED", resolution: "found" });
    expect(items(keyed, "UNCONF-2", "succeeded")).toHaveLength(1);
  });

  it("unsafe tool, declined charge found → UNKNOWN for a person (FOUND_STATE_UNKNOWN), nothing resent", async () => {
    const tool = await chargeTool(unkeyed, "unsafe");
    unkeyed.fault({ commit: true, state: "failed", answer: "reset" });
    const postsBefore = unkeyed.posts;
    const env = await charge(executorFor(tool), tool, "UNCONF-3");
    expect(env).toMatchObject({ status: "UNKNOWN", retry_safe: false, error: { code: "FOUND_STATE_UNKNOWN" } });
    expect(env.error?.message).toMatch(/declares no state/);
    expect(unkeyed.posts - postsBefore).toBe(1);
  });
});
