/**
 * Issue 21 §2 — a transport that retries on its own never yields "exactly once" (DESIGN.md rule 11).
 *
 * The field case: an `unsafe` tool's `invoke` posts through undici's retry interceptor; the first POST
 * commits and answers 503, the interceptor posts again, the second answers 201: two refunds at the
 * remote, and the agent was told "The effect happened exactly once". The same class for axios-retry,
 * got, ky, and the OpenAI, Anthropic, Stripe and AWS SDKs' own retries — each the real library
 * against a real loopback remote that commits every POST and answers the first one 503.
 *
 * What must hold, counted at the remote and read from what the agent and the operator see:
 * - the repeat is refused before its head is written wherever the tracker can (undici and fetch
 *   always; node:http when the retry needs a new connection): one effect, and the outcome is that of
 *   the one written request (a 503: UNKNOWN), never SUCCEEDED;
 * - where it cannot (a node:http retry on a reused keep-alive socket writes its head at once): two
 *   effects, and the call is UNKNOWN `REPEATED_WRITE` in the human queue with every attempt as
 *   evidence ("possibly more than one effect") — never a single effect;
 * - an `idempotent_by_key` tool whose retries carry the same key keeps today's behaviour: the
 *   remote dedupes, the call is SUCCEEDED with one effect per key.
 */
import { afterEach, describe, expect, it } from "vitest";
import { canon } from "../../src/canon.ts";
import { Deadline } from "../../src/deadline.ts";
import type { Envelope } from "../../src/envelope.ts";
import { createExecutor } from "../../src/executor.ts";
import { invokeTracked } from "../../src/invoke-tracker.ts";
import { MemoryIntentStore } from "../../src/memory-intent-store.ts";
import { defineTool } from "../../src/tool.ts";
import {
  type CommitThenFailRemote,
  commitThenFail,
  RETRYING_CLIENTS,
  type RetryingClient,
} from "./retrying-clients.ts";

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const r of open.splice(0)) await r.close();
});

async function setup(
  make: () => RetryingClient,
  closeAfter503: boolean,
): Promise<{ client: RetryingClient; remote: CommitThenFailRemote }> {
  const client = make();
  const remote = await commitThenFail({ closeAfter503 });
  open.push(client, remote);
  return { client, remote };
}

function refundTool(
  client: RetryingClient,
  remote: CommitThenFailRemote,
  kind: "unsafe" | "idempotent_by_key",
  probe?: () => Promise<unknown>,
) {
  return defineTool({
    name: "issue_refund",
    kind,
    identity: { order_id: canon.upper, amount: canon.decimal(2) },
    timeoutMs: 8_000,
    invoke: (_args, ctx) => client.post(remote.origin, ctx.idempotencyKey),
    ...(probe ? { probeByIdentity: probe } : {}),
  });
}

async function callRefund(
  client: RetryingClient,
  remote: CommitThenFailRemote,
  kind: "unsafe" | "idempotent_by_key",
  probe?: () => Promise<unknown>,
) {
  const store = new MemoryIntentStore();
  const executor = createExecutor({ store, tools: [refundTool(client, remote, kind, probe)] });
  const call = () =>
    executor.call({
      runId: "run-21-2",
      stepId: "refund",
      tool: "issue_refund",
      args: { order_id: "A-2102", amount: "49.90" },
      deadline: Deadline.after(20_000),
    });
  const envelope: Envelope = await call();
  const record = await store.get(envelope.idempotency_key);
  if (record === null) throw new Error("no record");
  const events = await store.listEvents(record.key);
  return { envelope, record, events, call };
}

const cases = RETRYING_CLIENTS.flatMap((make) => {
  const { name, transport } = make();
  return [true, false].map((closeAfter503) => ({ make, name, transport, closeAfter503 }));
});

describe("control: each library really retries a POST after the remote committed and answered 503", () => {
  it.each(RETRYING_CLIENTS.map((make) => [make().name, make] as const))(
    "%s, unguarded: two effects and the invoke succeeds (what the executor reported SUCCEEDED before)",
    async (_name, make) => {
      const { client, remote } = await setup(make, false);
      const attempt = await invokeTracked(() => client.post(remote.origin, "key-control"));
      expect(attempt.ok).toBe(true);
      expect(remote.effects).toHaveLength(2);
      expect(attempt.repeats).toMatchObject({ guarded: false, written: 1, refused: 0 });
    },
  );
});

describe("an unsafe tool: a library's own retry never yields 'exactly once' (issue 21 §2)", () => {
  it.each(cases)("$name, remote closes after 503: $closeAfter503", async ({ make, transport, closeAfter503 }) => {
    const { client, remote } = await setup(make, closeAfter503);
    const { envelope, record, events } = await callRefund(client, remote, "unsafe");

    // What the agent is told: never a single effect, never "retry".
    expect(envelope.status).toBe("UNKNOWN");
    expect(envelope.retry_safe).toBe(false);
    expect(envelope.message).not.toContain("exactly once");

    // Where the tracker can (undici and fetch always; node:http when the retry needs a new
    // connection) the repeat is refused before its head is written. A node:http retry on a reused
    // keep-alive socket has its head on the wire before any channel speaks (Stripe's client opens
    // a new connection for its delayed retry: refused too).
    if (transport === "undici" || closeAfter503) expect(remote.effects).toHaveLength(1);
    if (remote.effects.length === 1) {
      // The repeat was refused: one effect, and the outcome is the one written request's (a 503).
      const outcomes = events.filter((e) => e.type === "outcome");
      expect(outcomes).toHaveLength(1);
      expect(outcomes[0]?.data).toMatchObject({ outcome: "UNKNOWN", code: "GATEWAY_5XX" });
      // What the operator reads in the log: every attempt, the repeat refused.
      expect(String(outcomes[0]?.data.attempts)).toMatch(
        /#1 written, answered 503; #2 refused before its head was written/,
      );
    } else {
      // The head of the retry was on the wire at once (a reused keep-alive socket): two effects,
      // and a person gets the call with every attempt as evidence.
      expect(remote.effects).toHaveLength(2);
      expect(record).toMatchObject({ status: "UNKNOWN", needsHuman: true });
      expect(record.error?.code).toBe("REPEATED_WRITE");
      expect(envelope.resolution).toBe("needs_human");
      expect(events.find((e) => e.type === "outcome")?.data).toMatchObject({ code: "REPEATED_WRITE" });
      const reason = String(events.find((e) => e.type === "needs_human")?.data.reason);
      expect(reason).toContain("possibly more than one effect");
      expect(reason).toContain("#1 written, answered 503; #2 written, answered 201");
    }
  });
});

describe("an idempotent_by_key tool: a same-key library retry is deduped by the remote (today's behaviour)", () => {
  it("undici interceptors.retry: the retry is sent with the same key, the call is SUCCEEDED, one effect per key", async () => {
    const make = RETRYING_CLIENTS[0] as () => RetryingClient;
    const { client, remote } = await setup(make, false);
    const { envelope } = await callRefund(client, remote, "idempotent_by_key");
    expect(remote.effects).toHaveLength(2);
    expect(new Set(remote.effects.map((e) => e.key))).toEqual(new Set([envelope.idempotency_key]));
    expect(remote.distinctKeyedEffects()).toBe(1);
    expect(envelope).toMatchObject({ status: "SUCCEEDED", retry_safe: true });
  });
});

describe("a REPEATED_WRITE record is never settled by a probe that finds 'the effect' (issue 21 §2)", () => {
  it("axios-retry on a reused keep-alive socket, with an identity probe that finds a refund: stays with a person", async () => {
    const make = RETRYING_CLIENTS[1] as () => RetryingClient; // axios + axios-retry: node:http
    const { client, remote } = await setup(make, false);
    let probes = 0;
    const found = async () => {
      probes += 1;
      return { id: "re_2", object: "refund" };
    };
    const { envelope, record, call } = await callRefund(client, remote, "unsafe", found);
    expect(remote.effects).toHaveLength(2);
    expect(envelope).toMatchObject({ status: "UNKNOWN", retry_safe: false, resolution: "needs_human" });
    expect(record).toMatchObject({ needsHuman: true, error: { code: "REPEATED_WRITE" } });
    // The agent calls the step again (rule 2: reconcile, never resend): one effect found would prove
    // nothing about how many there are, so nothing is probed and nothing is sent.
    const repeat = await call();
    expect(repeat).toMatchObject({ status: "UNKNOWN", resolution: "needs_human", error: { code: "REPEATED_WRITE" } });
    expect(probes).toBe(0);
    expect(remote.effects).toHaveLength(2);
  });
});
