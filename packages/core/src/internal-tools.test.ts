/**
 * Internal tools (issue 23 §3): the embedding service's own effects (Tristate's notifications) run
 * through the executor under the same rules, but are not in the catalog — `call` refuses them as an
 * unknown tool without naming them, `tools` does not list them, `callInternal` runs them — and the
 * envelope of a record waiting for a person says an operator was notified only when the service says so.
 */
import { FakeClock } from "@tristate/testing";
import { describe, expect, it } from "vitest";
import { canon } from "./canon.ts";
import { Deadline } from "./deadline.ts";
import { AmbiguousError } from "./errors.ts";
import { createExecutor } from "./executor.ts";
import { MemoryIntentStore } from "./memory-intent-store.ts";
import { defineTool } from "./tool.ts";

function setup(notified: () => boolean = () => false) {
  const clock = new FakeClock();
  const sent: string[] = [];
  const visible = defineTool({
    name: "send_mail",
    kind: "unsafe",
    identity: { id: canon.exact },
    timeoutMs: 1000,
    invoke: async (args: { id: string }) => {
      sent.push(`mail ${args.id}`);
      throw new AmbiguousError("read timeout", { code: "READ_TIMEOUT" });
    },
  });
  const internal = defineTool({
    name: "tristate.notify.webhook",
    kind: "idempotent_by_key",
    identity: { id: canon.exact },
    timeoutMs: 1000,
    invoke: async (args: { id: string }) => {
      sent.push(`notify ${args.id}`);
      return { ok: true };
    },
  });
  const executor = createExecutor({
    store: new MemoryIntentStore(),
    tools: [visible],
    internalTools: [internal],
    clock,
    humanQueueNotified: notified,
  });
  return { executor, sent, clock };
}

const input = (tool: string, id = "a") => ({
  runId: "r",
  stepId: `s-${id}`,
  tool,
  args: { id },
  deadline: Deadline.after(30_000),
});

describe("internal tools", () => {
  it("are not in the catalog, refused by call as unknown (not named), run by callInternal", async () => {
    const { executor, sent } = setup();
    expect([...executor.tools.keys()]).toStrictEqual(["send_mail"]);
    const refused = await executor.call(input("tristate.notify.webhook"));
    expect(refused.status).toBe("FAILED_NO_EFFECT");
    expect(refused.error?.code).toBe("UNKNOWN_TOOL");
    // Word for word the answer for a name nobody declared: the catalog it lists has no internal tool.
    expect(refused.message).toBe('There is no tool named "tristate.notify.webhook". Use one of: send_mail.');
    expect(sent).toStrictEqual([]);
    const ran = await executor.callInternal(input("tristate.notify.webhook"));
    expect(ran.status).toBe("SUCCEEDED");
    expect(sent).toStrictEqual(["notify a"]);
    // A replay through callInternal sends nothing again.
    expect((await executor.callInternal(input("tristate.notify.webhook"))).replayed).toBe(true);
    expect(sent).toHaveLength(1);
  });

  it("a name may not be both a catalog tool and an internal tool", () => {
    const tool = defineTool({ name: "x", kind: "read_only", timeoutMs: 1000, invoke: async () => null });
    expect(() => createExecutor({ store: new MemoryIntentStore(), tools: [tool], internalTools: [tool] })).toThrow(
      'internalTools repeats the tool "x"',
    );
  });
});

describe("action_taken of a record waiting for a person", () => {
  /** Calls the unsafe tool (ambiguous, no probe) and reconciles until the record waits for a person. */
  async function queued(notified: boolean) {
    const { executor, clock } = setup(() => notified);
    let envelope = await executor.call(input("send_mail"));
    for (let i = 0; i < 10 && !(await executor.store.get(envelope.idempotency_key))?.needsHuman; i++) {
      clock.advance(600_000);
      envelope = await executor.reconcileKey(envelope.idempotency_key, Deadline.after(30_000, clock), "sweeper");
    }
    expect((await executor.store.get(envelope.idempotency_key))?.needsHuman).toBe(true);
    return executor.call(input("send_mail"));
  }

  it("says an operator has been notified when the service has a channel for the human queue", async () => {
    expect((await queued(true)).action_taken).toContain("an operator has been notified");
  });

  it("says the record waits in the human queue otherwise", async () => {
    const envelope = await queued(false);
    expect(envelope.action_taken).toContain("waits in the human queue");
    expect(envelope.action_taken).not.toContain("notified");
  });
});
