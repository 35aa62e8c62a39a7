/**
 * T07 — The runtime's fetch silently replays a POST on a reused keep-alive socket (Bun, routecraft).
 * Source: https://github.com/oven-sh/bun/issues/28706 (fixed by oven-sh/bun#28708).
 * The transport-level version is in src/http.test.ts; this is the executor-level one.
 *
 * Remote (the shared fake remote with keep-alive; `POST /effects` stands for `POST /orders`): a
 * first GET from the test pools a socket in the transport; then the POST arrives on that socket,
 * the remote reads it whole, commits and resets the socket before any response byte. Later
 * requests are served normally. It honours keys; probe `GET /effects?clientRef=<key>`.
 *
 * Scale: 1 case-second = 50 ms. Runs under Node only (this suite's runtime; Bun is not installed).
 * Difference by design: the executor's first probe runs at once (+0 s), not at +1 s.
 */

import { type FakeRemote, startFakeRemote } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canon } from "../../src/canon.ts";
import { createExecutor } from "../../src/executor.ts";
import { callHttp } from "../../src/http.ts";
import { MemoryIntentStore } from "../../src/memory-intent-store.ts";
import { defineTool } from "../../src/tool.ts";
import { eventsOf, probeByClientRef, scaledOptions, sleep, Timeline } from "./support.ts";

const S = 50;
let remote: FakeRemote;
let store: MemoryIntentStore;

beforeEach(async () => {
  remote = await startFakeRemote({ honorsKey: true });
  store = new MemoryIntentStore();
});
afterEach(async () => {
  await remote.close();
});

describe("field-t07-keepalive-post-no-replay", () => {
  it("a POST reset on a pooled keep-alive socket is sent once; UNKNOWN → probe finds the order → SUCCEEDED", async () => {
    const tl = new Timeline(S);
    const postsWhenClassified: number[] = [];
    const tool = defineTool({
      name: "order.create",
      kind: "idempotent_by_key",
      identity: { customerRef: canon.upper, sku: canon.upper, qty: canon.decimal(0) },
      timeoutMs: 5 * S, // read timeout 5 s
      invoke: async (args, ctx) =>
        (await callHttp(ctx, { method: "POST", url: `${remote.url}/effects`, body: args })).body,
      probe: async (_args, ctx) => {
        // Reconciliation starts only after the executor classified the send.
        postsWhenClassified.push(remote.posts);
        return probeByClientRef(remote.url, ctx);
      },
    });
    const executor = createExecutor({ store, tools: [tool], ...scaledOptions(S) });

    // Pool a keep-alive socket in the transport (the module's agent) with a probe-like GET.
    const warm = await callHttp({}, { method: "GET", url: `${remote.url}/effects?clientRef=none` });
    expect(warm.status).toBe(200);
    // undici frees the pooled connection a tick after the body ends; dispatching in the same tick
    // would open a second connection and miss the path under test.
    await sleep(50);

    remote.fault({ answer: "reset" });
    const env = await executor.call({
      runId: "run-07",
      stepId: "place-order",
      tool: "order.create",
      args: { customerRef: "CUST-0001", sku: "SKU-1", qty: 1 },
      deadline: tl.deadline(15),
    });

    const [get, post] = remote.requests;
    expect(post?.method).toBe("POST");
    expect(post?.remotePort).toBe(get?.remotePort); // the POST went over the pooled socket
    expect(postsWhenClassified[0]).toBe(1); // no hidden transport replay before classification
    const outcome = (await eventsOf(store, env.idempotency_key, "outcome"))[0];
    expect(outcome?.data).toMatchObject({ outcome: "UNKNOWN", code: "RESET_AFTER_WRITE" });

    expect(env).toMatchObject({
      status: "SUCCEEDED",
      retry_safe: true,
      attempt: 1,
      resolution: "found",
    });
    expect(remote.effects).toHaveLength(1);
    expect(remote.posts).toBe(1);
    expect(remote.requests.filter((r) => r.method === "POST")).toHaveLength(1);
  });
});
