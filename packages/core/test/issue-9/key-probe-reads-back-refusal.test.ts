/**
 * A key probe that reads back the remote's own refusal of this key's request (`refusedUnderKey`) is
 * proof of no effect: the UNKNOWN original ends FAILED_NO_EFFECT `REJECTED` without a resend (a
 * resend would only be refused again, and a refused resend proves nothing: rule 5f). The agent's next
 * attempt travels under a fresh key, since the remote holds an answer under the old one. An identity
 * probe's "refusal" cannot be tied to this request: it reads as absent.
 */

import { type FakeRemote, refundTool, startFakeRemote } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Deadline } from "../../src/deadline.ts";
import { createExecutor, type Executor } from "../../src/executor.ts";
import { callHttp } from "../../src/http.ts";
import { MemoryIntentStore } from "../../src/memory-intent-store.ts";
import { refusedUnderKey } from "../../src/probe-answer.ts";

const REFUND = { order_id: "A-77", amount: "12.00", currency: "EUR" };

let remote: FakeRemote;
let store: MemoryIntentStore;
/** Keys whose original the "remote" processed and refused (what its key store would replay). */
let refusedKeys: Set<string>;

beforeEach(async () => {
  remote = await startFakeRemote({ honorsKey: true });
  store = new MemoryIntentStore();
  refusedKeys = new Set();
});
afterEach(async () => {
  await remote.close();
});

function executor(where: "key" | "identity"): Executor {
  const lookup = async (_args: unknown, ctx: { clientRef: string }) =>
    refusedKeys.has(ctx.clientRef) ? refusedUnderKey("Error: insufficient balance", 402) : null;
  const tool = refundTool(remote, {
    kind: "idempotent_by_key",
    invoke: async (args, ctx) =>
      (await callHttp(ctx, { method: "POST", url: `${remote.url}/effects`, body: args })).body,
    ...(where === "key"
      ? { probe: lookup, probeByIdentity: undefined }
      : { probe: undefined, probeByIdentity: lookup }),
  });
  return createExecutor({ store, tools: [tool], probe: { attempts: 2, spacingMs: 10, timeoutMs: 500 } });
}

const call = (ex: Executor) =>
  ex.call({ runId: "run-r", stepId: "pay", tool: "issue_refund", args: REFUND, deadline: Deadline.after(10_000) });

describe("a key probe reads back the remote's refusal of this key's request", () => {
  it("→ FAILED_NO_EFFECT REJECTED without a resend; the next attempt travels under a fresh key", async () => {
    const ex = executor("key");
    // The remote processed the request and refused it, but the answer was lost.
    remote.fault({ commit: false, answer: "reset" });
    const key = ex.keyFor({ runId: "run-r", stepId: "pay", tool: "issue_refund", args: REFUND });
    refusedKeys.add(key);
    const first = await call(ex);
    expect(first).toMatchObject({ status: "FAILED_NO_EFFECT", retry_safe: true, error: { code: "REJECTED" } });
    expect(first.error?.message).toContain("insufficient balance");
    expect(remote.posts).toBe(1); // never resent
    expect(remote.effects).toHaveLength(0);
    const events = (await store.listEvents(key)).map((e) => [e.type, e.data.answer ?? e.data.outcome]);
    expect(events).toContainEqual(["probe", "refused"]);

    const second = await call(ex);
    expect(second).toMatchObject({ status: "SUCCEEDED", attempt: 2, idempotency_key: key });
    expect(second.sent_key).toBeDefined();
    expect(second.sent_key).not.toBe(key);
    expect(remote.keysSeen).toEqual([key, second.sent_key]);
    expect(remote.effects).toHaveLength(1);
  });

  it("an identity probe's refusal is only 'absent': the keyed tool resends with the same key", async () => {
    const ex = executor("identity");
    remote.fault({ commit: false, answer: "reset" });
    const key = ex.keyFor({ runId: "run-r", stepId: "pay", tool: "issue_refund", args: REFUND });
    refusedKeys.add(key);
    const env = await call(ex);
    expect(env).toMatchObject({ status: "SUCCEEDED", resolution: "absent_resent", attempt: 2 });
    expect(remote.keysSeen).toEqual([key, key]);
    expect(remote.effects).toHaveLength(1);
  });
});
