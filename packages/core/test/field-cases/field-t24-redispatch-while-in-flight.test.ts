/**
 * T24 — The agent platform re-dispatches a long tool call at about 180 s while the original still
 * runs (LangGraph). Source: https://github.com/langchain-ai/langgraph/issues/7213 (and #7417).
 *
 * Remote `doc-processor` (the shared fake remote, honouring keys; `POST /effects` stands for
 * `POST /jobs`): runs 200 s, then commits and answers 200. Probe by key.
 *
 * Scale: 1 case-second = 10 ms.
 * Difference by design: the lease is the owning call's deadline (300 s here), not a 60 s lease
 * renewed every 20 s; at t=181 it is live either way, so worker B answers IN_FLIGHT and changes
 * nothing.
 */

import { type FakeRemote, startFakeRemote } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canon } from "../../src/canon.ts";
import { createExecutor } from "../../src/executor.ts";
import { callHttp } from "../../src/http.ts";
import { MemoryIntentStore } from "../../src/memory-intent-store.ts";
import { defineTool } from "../../src/tool.ts";
import { probeByClientRef, scaledOptions, Timeline } from "./support.ts";

const S = 10;
let remote: FakeRemote;
let store: MemoryIntentStore;

beforeEach(async () => {
  remote = await startFakeRemote({ honorsKey: true });
  store = new MemoryIntentStore();
});
afterEach(async () => {
  await remote.close();
});

function docsTool() {
  return defineTool({
    name: "docs.process",
    kind: "idempotent_by_key",
    identity: { docId: canon.upper, pipeline: canon.exact },
    timeoutMs: 300 * S, // read timeout 300 s
    invoke: async (args, ctx) =>
      (await callHttp(ctx, { method: "POST", url: `${remote.url}/effects`, body: args })).body,
    probe: (_args, ctx) => probeByClientRef(remote.url, ctx),
  });
}

describe("field-t24-redispatch-while-in-flight", () => {
  it("worker B at t=181 gets IN_FLIGHT with no remote call; A finishes at 200; B at 205 replays SUCCEEDED", async () => {
    const tl = new Timeline(S);
    const process = (deadlineS: number) => ({
      runId: "run-24",
      stepId: "process-doc",
      tool: "docs.process",
      args: { docId: "DOC-0001", pipeline: "extract" },
      deadline: tl.deadline(deadlineS),
    });
    remote.fault({ commitDelayMs: 200 * S }); // runs 200 s, then commits and answers

    tl.start();
    const workerA = createExecutor({ store, tools: [docsTool()], ...scaledOptions(S) });
    const a = workerA.call(process(300));

    await tl.until(181);
    const workerB = createExecutor({ store, tools: [docsTool()], ...scaledOptions(S) }); // a new process
    const b1 = await workerB.call(process(300));
    // answered while A's call is still running: IN_FLIGHT below
    expect(b1).toMatchObject({
      status: "UNKNOWN",
      retry_safe: false,
      replayed: true,
      attempt: 1,
      error: { code: "IN_FLIGHT" },
    });
    expect(remote.requests).toHaveLength(1); // only A's POST: B neither sent nor probed
    const record = await store.get(b1.idempotency_key);
    expect(record).toMatchObject({ status: "PENDING", version: 1 }); // the owner's record is untouched

    const envA = await a;
    expect(envA).toMatchObject({
      status: "SUCCEEDED",
      replayed: false,
      attempt: 1,
      idempotency_key: b1.idempotency_key,
    });
    expect(tl.t()).toBeGreaterThanOrEqual(200);

    await tl.until(205);
    const b2 = await workerB.call(process(300));
    expect(b2).toMatchObject({ status: "SUCCEEDED", replayed: true, retry_safe: true, attempt: 1 });
    expect(b2.result).toEqual(envA.result);
    expect(remote.posts).toBe(1);
    expect(remote.effects).toHaveLength(1);
  });
});
