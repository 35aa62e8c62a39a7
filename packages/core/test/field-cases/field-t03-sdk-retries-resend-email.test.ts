/**
 * T03 — SDK default retries re-send "send email" after a server-side hang (Composio).
 * Source: https://github.com/ComposioHQ/composio/issues/3586 (fixes ComposioHQ/composio#3657, #3716).
 *
 * Remote `tool-exec-api` (the shared fake remote; `POST /effects` stands for
 * `POST /tools/execute/mail.send`) records the mail at once and holds the response for 200 s. It
 * honours keys; probe `GET /effects?clientRef=<key>` (for `GET /tools/sent?ref=<key>`).
 * The transport is an SDK-style client configured with `maxRetries: 2` that retries on timeouts
 * ({@link sdkClient}); the side-effecting tool turns those inner retries off per request
 * (`maxRetries: 0`), as the maintainers' fix did for writes.
 *
 * Scale: 1 case-second = 20 ms.
 * Difference by design: the executor's first probe runs at once at t=10 (not t=11).
 */

import { type FakeRemote, startFakeRemote } from "@tristate/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { canon } from "../../src/canon.ts";
import { createExecutor } from "../../src/executor.ts";
import { MemoryIntentStore } from "../../src/memory-intent-store.ts";
import { defineTool } from "../../src/tool.ts";
import { probeByClientRef, scaledOptions, sdkClient, Timeline } from "./support.ts";

const S = 20;
let remote: FakeRemote;
let store: MemoryIntentStore;

beforeEach(async () => {
  remote = await startFakeRemote({ honorsKey: true });
  remote.fault({ respondDelayMs: 200 * S }); // records the mail at once, answers after 200 s
  store = new MemoryIntentStore();
});
afterEach(async () => {
  await remote.close();
});

const args = { to: "recipient@example.test", subject: "Invoice INV-0001", attachmentRef: "file-0001" };

/** `mail.send` over the SDK; `sdkRetries` is what the tool asks of the SDK per request. */
function mailTool(sdk: ReturnType<typeof sdkClient>, options: { timeoutS: number; sdkRetries?: number }) {
  return defineTool({
    name: "mail.send",
    kind: "idempotent_by_key",
    identity: { to: canon.lower, subject: canon.exact, attachmentRef: canon.exact },
    timeoutMs: options.timeoutS * S,
    invoke: async (a, ctx) =>
      (
        await sdk.post(
          ctx,
          { method: "POST", url: `${remote.url}/effects`, body: a },
          options.sdkRetries === undefined ? {} : { maxRetries: options.sdkRetries },
        )
      ).body,
    probe: (_a, ctx) => probeByClientRef(remote.url, ctx),
  });
}

describe("field-t03-sdk-retries-resend-email", () => {
  it("the tool turns the SDK's retries off: one POST in the first 30 s, UNKNOWN at 10, probe finds it → SUCCEEDED", async () => {
    const tl = new Timeline(S);
    const sdk = sdkClient({ maxRetries: 2, perAttemptTimeoutMs: 10 * S });
    const executor = createExecutor({
      store,
      tools: [mailTool(sdk, { timeoutS: 10, sdkRetries: 0 })],
      ...scaledOptions(S),
    });

    tl.start();
    const env = await executor.call({
      runId: "run-03",
      stepId: "email-invoice",
      tool: "mail.send",
      args,
      deadline: tl.deadline(30),
    });
    expect(env).toMatchObject({ status: "SUCCEEDED", retry_safe: true, attempt: 1, resolution: "found" });
    expect(tl.t()).toBeGreaterThanOrEqual(10);
    expect(sdk.attempts).toBe(1);
    expect(remote.effects).toHaveLength(1);

    await tl.until(30);
    expect(remote.posts).toBe(1); // exactly one POST in the first 30 s
    expect(remote.keysSeen).toEqual([env.idempotency_key]);
  });

  it("control: with the SDK's default retries left on, a second POST reaches the remote (what the test above rules out)", async () => {
    const tl = new Timeline(S);
    const sdk = sdkClient({ maxRetries: 2, perAttemptTimeoutMs: 10 * S });
    const executor = createExecutor({ store, tools: [mailTool(sdk, { timeoutS: 30 })], ...scaledOptions(S) });

    tl.start();
    const env = await executor.call({
      runId: "run-03",
      stepId: "email-invoice",
      tool: "mail.send",
      args,
      deadline: tl.deadline(30),
    });
    // The retry at t=10 reaches the remote; only its key dedupe (409 while in flight) prevents a second mail.
    expect(remote.posts).toBeGreaterThan(1);
    expect(sdk.attempts).toBeGreaterThan(1);
    expect(remote.effects).toHaveLength(1);
    expect(env.status).toBe("SUCCEEDED");
  });
});
