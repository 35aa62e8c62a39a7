/**
 * T06 — Long synchronous function call re-invoked by SDK retries after the read timeout
 * (boto3 / AWS CLI / Serverless). Source: https://github.com/boto/boto3/issues/883.
 *
 * Remote `fn-invoke` (the shared fake remote without key support; `POST /effects` stands for
 * `POST /invoke`) runs for 70 s; only at the end does it write the result row (keyed by the
 * correlation id the tool sends in the body), then it answers 200. Probe: `GET /effects?clientRef=`
 * (for `GET /results?correlationId=`). Tool `fn.invoke` is `unsafe`.
 *
 * Scale: 1 case-second = 20 ms.
 * Differences by design: the executor probes at +0, +1 and +3 spacing units, each spacing capped at
 * a quarter of the time left (here t≈60, 61, 62.75), not at 61, 62, 64; and it returns as soon as
 * the probes are done (t≈63) instead of at the deadline (t=68). All probes still fall before the
 * row appears at t=70. The record stays UNKNOWN in the human queue (PROBES_ABSENT_NO_DEDUPE): the
 * remote cannot dedupe, so absence is no reason to resend.
 */

import { type FakeRemote, startFakeRemote } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canon } from "../../src/canon.ts";
import { createExecutor } from "../../src/executor.ts";
import { MemoryIntentStore } from "../../src/memory-intent-store.ts";
import { clientRefTool, eventsOf, scaledOptions, Timeline } from "./support.ts";

const S = 50;
let remote: FakeRemote;
let store: MemoryIntentStore;

beforeEach(async () => {
  remote = await startFakeRemote({ honorsKey: false });
  store = new MemoryIntentStore();
});
afterEach(async () => {
  await remote.close();
});

function fnTool() {
  return clientRefTool(remote.url, {
    name: "fn.invoke",
    identity: { functionName: canon.exact, jobId: canon.upper },
    timeoutMs: 60 * S, // read timeout 60 s
  });
}

describe("field-t06-long-invoke-no-resend", () => {
  it("read timeout at 60 while the function runs: absent probes, no resend; after a restart at 80 the probe finds the row", async () => {
    const tl = new Timeline(S);
    const args = { functionName: "loader", jobId: "JOB-0001" };
    const run = () =>
      createExecutor({ store, tools: [fnTool()], ...scaledOptions(S) }).call({
        runId: "run-06",
        stepId: "load",
        tool: "fn.invoke",
        args,
        deadline: tl.deadline(68),
      });
    remote.fault({ commitDelayMs: 70 * S }); // the result row is written at t=70, then 200

    tl.start();
    const first = await run();
    const returnedAt = tl.t();
    expect(returnedAt).toBeGreaterThanOrEqual(60);
    expect(returnedAt).toBeLessThanOrEqual(68);
    expect(first).toMatchObject({
      status: "UNKNOWN",
      retry_safe: false,
      attempt: 1,
      resolution: "needs_human",
      error: { code: "PROBES_ABSENT_NO_DEDUPE" },
    });
    const probes = await eventsOf(store, first.idempotency_key, "probe");
    expect(probes.map((p) => p.data.answer)).toEqual(["absent", "absent", "absent"]);
    expect(remote.effects).toHaveLength(0); // every probe ran before the row existed
    expect(remote.posts).toBe(1); // no resend
    expect((await store.get(first.idempotency_key))?.status).toBe("UNKNOWN");

    // The function finishes at t=70. At t=80, restart (new executor, same store) and call again.
    await tl.until(80);
    expect(remote.effects).toHaveLength(1);
    const second = await run();
    expect(second).toMatchObject({
      status: "SUCCEEDED",
      retry_safe: true,
      attempt: 1,
      resolution: "found",
      idempotency_key: first.idempotency_key,
    });
    expect(remote.posts).toBe(1);
    expect(remote.effects).toHaveLength(1);
    expect(await store.get(first.idempotency_key)).toMatchObject({ status: "SUCCEEDED", needsHuman: false });
  });
});
