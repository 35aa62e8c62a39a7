/**
 * T09 — "fetch failed" hides the real cause, and some runtimes drop `.code` (undici, Claude Code
 * on Bun, ky). Source: https://github.com/nodejs/undici/issues/1922.
 * The table-driven rows are in src/classify.test.ts; this is the integration row through the
 * executor (tool with `kind: "unsafe"`, i.e. remoteHonorsKey false).
 *
 * Integration row: a real `fetch` to 127.0.0.1 on a port with no listener → FAILED_NO_EFFECT,
 * `effects==0`, the record FAILED_NO_EFFECT (not PENDING). The same through `callHttp`. Added
 * counterpart: a real `fetch` whose request was read and then reset must NOT be read as "not sent".
 */

import { type FakeRemote, startFakeRemote } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canon } from "../../src/canon.ts";
import { Deadline } from "../../src/deadline.ts";
import { createExecutor } from "../../src/executor.ts";
import { callHttp } from "../../src/http.ts";
import { MemoryIntentStore } from "../../src/memory-intent-store.ts";
import { type AnyTool, defineTool, type InvokeContext } from "../../src/tool.ts";
import { eventsOf, scaledOptions, withoutKeyHeader } from "./support.ts";

const S = 50;
let store: MemoryIntentStore;

beforeEach(() => {
  store = new MemoryIntentStore();
});

type Transport = (url: string, body: unknown, ctx: InvokeContext) => Promise<unknown>;

/** The raw platform `fetch`: its errors reach the executor as thrown (`TypeError: fetch failed`). */
const rawFetch: Transport = async (url, body, ctx) => {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: ctx.signal,
  });
  return res.json();
};
const viaCallHttp: Transport = async (url, body, ctx) =>
  (await callHttp(withoutKeyHeader(ctx), { method: "POST", url, body })).body;

function orderTool(baseUrl: () => string, transport: Transport): AnyTool {
  return defineTool({
    name: "order.create",
    kind: "unsafe",
    identity: { orderRef: canon.upper },
    timeoutMs: 5 * S,
    invoke: (args, ctx) => transport(`${baseUrl()}/effects`, args, ctx),
  });
}

describe("field-t09-fetch-failed-integration", () => {
  let remote: FakeRemote | undefined;
  afterEach(async () => {
    await remote?.close();
    remote = undefined;
  });

  for (const [name, transport] of [
    ["fetch", rawFetch],
    ["callHttp", viaCallHttp],
  ] as const) {
    it(`${name} to a port with no listener → FAILED_NO_EFFECT, retry_safe, record FAILED_NO_EFFECT, no effect`, async () => {
      const down = await startFakeRemote({ honorsKey: false });
      const url = down.url;
      await down.close(); // the remote is down: nothing listens on its port any more
      const executor = createExecutor({ store, tools: [orderTool(() => url, transport)], ...scaledOptions(S) });
      const env = await executor.call({
        runId: "run-09",
        stepId: "create",
        tool: "order.create",
        args: { orderRef: "ORD-0009" },
        deadline: Deadline.after(10 * S),
      });
      expect(env).toMatchObject({
        status: "FAILED_NO_EFFECT",
        retry_safe: true,
        attempt: 1,
        error: { code: "NOT_SENT" },
      });
      expect(down.effects).toHaveLength(0);
      expect(down.posts).toBe(0);
      const record = await store.get(env.idempotency_key);
      expect(record?.status).toBe("FAILED_NO_EFFECT");
    });
  }

  it("counterpart: fetch whose request was read, then reset (fetch failed, cause UND_ERR_SOCKET) → UNKNOWN, not retry_safe", async () => {
    const live = await startFakeRemote({ honorsKey: false });
    remote = live;
    live.fault({ answer: "reset" });
    const executor = createExecutor({ store, tools: [orderTool(() => live.url, rawFetch)], ...scaledOptions(S) });
    const env = await executor.call({
      runId: "run-09",
      stepId: "create-2",
      tool: "order.create",
      args: { orderRef: "ORD-0010" },
      deadline: Deadline.after(10 * S),
    });
    expect(env).toMatchObject({ status: "UNKNOWN", retry_safe: false, attempt: 1 });
    const outcome = (await eventsOf(store, env.idempotency_key, "outcome"))[0];
    expect(outcome?.data).toMatchObject({ outcome: "UNKNOWN", code: "RESET_AFTER_WRITE" });
    expect(live.effects).toHaveLength(1);
    expect(live.posts).toBe(1);
    expect((await store.get(env.idempotency_key))?.status).toBe("UNKNOWN");
  });
});
