/**
 * T01 — Email accepted by the provider, client timed out, app re-sent it (FreeScout).
 * Source: https://github.com/freescout-help-desk/freescout/issues/5457
 *
 * Remote `mail-api` (the shared fake remote; `POST /effects` stands for `POST /messages`) stores the
 * message as soon as it arrives, then holds the response for 5 s. It honours keys; the probe is
 * `GET /effects?clientRef=<key>` (for `GET /messages?clientRef=<key>`).
 *
 * Scale: 1 case-second = 50 ms.
 * Difference by design: the executor's first probe runs at once when the call turns UNKNOWN
 * (t=2.0), not at +1 s; the intent (one probe finds the message, no resend) is unchanged.
 */

import { type FakeRemote, startFakeRemote } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canon } from "../../src/canon.ts";
import { createExecutor } from "../../src/executor.ts";
import { callHttp } from "../../src/http.ts";
import { MemoryIntentStore } from "../../src/memory-intent-store.ts";
import { defineTool } from "../../src/tool.ts";
import { eventsOf, probeByClientRef, scaledOptions, Timeline } from "./support.ts";

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

function emailTool() {
  return defineTool({
    name: "email.send",
    kind: "idempotent_by_key",
    identity: { to: canon.lower, templateId: canon.exact, ticketId: canon.upper },
    timeoutMs: 2 * S, // read timeout 2 s
    invoke: async (args, ctx) =>
      (await callHttp(ctx, { method: "POST", url: `${remote.url}/effects`, body: args })).body,
    probe: (_args, ctx) => probeByClientRef(remote.url, ctx),
  });
}

describe("field-t01-email-timeout-after-accept", () => {
  it("read timeout after the provider accepted → one probe finds it → SUCCEEDED, no resend; a repeat is replayed", async () => {
    const tl = new Timeline(S);
    const executor = createExecutor({ store, tools: [emailTool()], ...scaledOptions(S) });
    const args = { to: "recipient@example.test", templateId: "reply", ticketId: "TCK-0001", body: "…" };
    remote.fault({ commitDelayMs: 0.05 * S, respondDelayMs: 5 * S });

    tl.start();
    const env = await executor.call({
      runId: "run-01",
      stepId: "send-reply",
      tool: "email.send",
      args,
      deadline: tl.deadline(20),
    });

    expect(env).toMatchObject({
      status: "SUCCEEDED",
      retry_safe: true,
      attempt: 1,
      resolution: "found",
      replayed: false,
    });
    expect(env.error).toBeUndefined();
    expect(remote.effects).toHaveLength(1);
    expect(remote.posts).toBe(1); // no resend
    expect(remote.probes).toBe(1); // probes: 1
    expect(new Set(remote.keysSeen)).toEqual(new Set([env.idempotency_key]));
    // Settled by the probe (resolution found, outcome events below), not by the held response at t=5.

    // At t=2.0 the call was UNKNOWN with READ_TIMEOUT, then the probe found the message.
    const outcomes = await eventsOf(store, env.idempotency_key, "outcome");
    expect(outcomes.map((e) => e.data.outcome)).toEqual(["UNKNOWN", "SUCCEEDED"]);
    expect(outcomes[0]?.data.code).toBe("READ_TIMEOUT");
    expect(Number(outcomes[0]?.data.durationMs)).toBeGreaterThanOrEqual(2 * S - 5);
    const probes = await eventsOf(store, env.idempotency_key, "probe");
    expect(probes.map((p) => p.data.answer)).toEqual(["found"]);
    expect((await store.get(env.idempotency_key))?.status).toBe("SUCCEEDED");

    // A second run() with the same input: SUCCEEDED from the record, no remote call of any kind.
    const again = await executor.call({
      runId: "run-01",
      stepId: "send-reply",
      tool: "email.send",
      args,
      deadline: tl.deadline(20),
    });
    expect(again).toMatchObject({
      status: "SUCCEEDED",
      retry_safe: true,
      attempt: 1,
      replayed: true,
      idempotency_key: env.idempotency_key,
    });
    expect(remote.posts).toBe(1);
    expect(remote.probes).toBe(1);
    expect(remote.effects).toHaveLength(1);
  });
});
