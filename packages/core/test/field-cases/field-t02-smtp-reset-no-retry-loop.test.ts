/**
 * T02 — SMTP retry loop re-sends after reset, with no limit (pimalaya).
 * Source: https://github.com/pimalaya/core/issues/46 (fixed by pimalaya/core#45).
 *
 * Remote `relay-api` (the shared fake remote without key support; `POST /effects` stands for
 * `POST /send`): every POST queues the message, then resets the socket (RST) without a response.
 * No probe. Tool `smtp.send` is `unsafe` with no probe.
 *
 * Scale: 1 case-second = 50 ms ("within 100 ms" is real time: a repeat call touches only the store).
 * Difference by design: once reconciliation finds no way to learn the outcome (no probe, no dedupe)
 * the record goes to the human queue, so the envelope's `error.code` is NO_PROBE; the transport's
 * reason RESET_AFTER_WRITE stays on the record's timeline (the UNKNOWN outcome event).
 */

import { type FakeRemote, startFakeRemote } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canon } from "../../src/canon.ts";
import { createExecutor } from "../../src/executor.ts";
import { callHttp } from "../../src/http.ts";
import { MemoryIntentStore } from "../../src/memory-intent-store.ts";
import { defineTool } from "../../src/tool.ts";
import { eventsOf, scaledOptions, Timeline, withoutKeyHeader } from "./support.ts";

const S = 50;
let remote: FakeRemote;
let store: MemoryIntentStore;

beforeEach(async () => {
  remote = await startFakeRemote({ honorsKey: false });
  // Every POST that arrives commits and resets: a resend would show as a second effect.
  for (let i = 0; i < 6; i++) remote.fault({ answer: "reset" });
  store = new MemoryIntentStore();
});
afterEach(async () => {
  await remote.close();
});

function smtpTool() {
  return defineTool({
    name: "smtp.send",
    kind: "unsafe",
    identity: { to: canon.lower, messageId: canon.exact },
    timeoutMs: 5 * S, // read timeout 5 s
    invoke: async (args, ctx) =>
      (await callHttp(withoutKeyHeader(ctx), { method: "POST", url: `${remote.url}/effects`, body: args })).body,
  });
}

describe("field-t02-smtp-reset-no-retry-loop", () => {
  it("reset after the relay queued the mail → UNKNOWN once; repeats and a restart never send again", async () => {
    const tl = new Timeline(S);
    const args = { to: "recipient@example.test", messageId: "<msg-0001@example.test>", body: "…" };
    const run = (executor: ReturnType<typeof createExecutor>) =>
      executor.call({ runId: "run-02", stepId: "notify", tool: "smtp.send", args, deadline: tl.deadline(10) });

    const first = await run(createExecutor({ store, tools: [smtpTool()], ...scaledOptions(S) }));
    expect(first).toMatchObject({
      status: "UNKNOWN",
      retry_safe: false,
      attempt: 1,
      resolution: "needs_human",
      error: { code: "NO_PROBE" },
    });
    const outcome = (await eventsOf(store, first.idempotency_key, "outcome"))[0];
    expect(outcome?.data).toMatchObject({ outcome: "UNKNOWN", code: "RESET_AFTER_WRITE" });
    expect(remote.effects).toHaveLength(1);
    expect(remote.posts).toBe(1);
    expect(remote.probes).toBe(0); // probes: 0

    // Three more calls on the same executor, then a restart (new executor, same store) and one more.
    const executor = createExecutor({ store, tools: [smtpTool()], ...scaledOptions(S) });
    const repeats = [
      () => run(executor),
      () => run(executor),
      () => run(executor),
      () => run(createExecutor({ store, tools: [smtpTool()], ...scaledOptions(S) })),
    ];
    for (const repeat of repeats) {
      // "within 100 ms" in the case is a speed figure; what matters is that nothing reaches the remote.
      const env = await repeat();
      expect(env).toMatchObject({
        status: "UNKNOWN",
        retry_safe: false,
        attempt: 1,
        replayed: true,
        idempotency_key: first.idempotency_key,
      });
      expect(remote.posts).toBe(1);
      expect(remote.effects).toHaveLength(1);
    }
    expect(remote.requests).toHaveLength(1); // no request of any kind reached the relay again
    expect((await store.get(first.idempotency_key))?.status).toBe("UNKNOWN");
  });
});
