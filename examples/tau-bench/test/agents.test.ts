/** The scripted agents' retry behaviour, against fake transports. */
import type { Envelope } from "@tristate/core";
import { describe, expect, it } from "vitest";
import {
  type DirectCall,
  type ExecuteInput,
  runBaselineAgent,
  runTristateAgent,
  type TristatePolicy,
} from "../src/replay/agents.ts";

const policy: TristatePolicy = { turnMs: 30_000, maxAttempts: 3, backoffMs: 1, maxPolls: 3, pollMs: 1 };

function envelope(status: Envelope["status"], extra: Partial<Envelope> = {}): Envelope {
  return {
    status,
    retry_safe: status !== "UNKNOWN",
    effect: "",
    action_taken: "",
    message: "",
    idempotency_key: "k".repeat(32),
    attempt: 1,
    replayed: false,
    ...extra,
  };
}

const task = {
  id: "retail-train-9",
  domain: "retail" as const,
  actions: [
    { name: "cancel_pending_order", kwargs: { order_id: "#W1", reason: "ordered by mistake" }, write: true },
    { name: "get_order_details", kwargs: { order_id: "#W1" }, write: false },
  ],
};

function scripted(answers: Envelope[]) {
  const calls: ExecuteInput[] = [];
  const execute = async (input: ExecuteInput) => {
    calls.push(input);
    const next = answers.shift();
    if (!next) throw new Error("no more scripted answers");
    return next;
  };
  return { calls, execute };
}

describe("Tristate agent", () => {
  it("calls again (same run, step, arguments) while FAILED_NO_EFFECT is retry_safe, at most 3 attempts", async () => {
    const { calls, execute } = scripted([
      envelope("FAILED_NO_EFFECT", { error: { code: "NOT_SENT", message: "refused" } }),
      envelope("FAILED_NO_EFFECT", { error: { code: "NOT_SENT", message: "refused" } }),
      envelope("SUCCEEDED", { result: { output: "{}" } }),
      envelope("SUCCEEDED", { result: { output: "{}" } }),
    ]);
    const run = await runTristateAgent(execute, task, "run-1", "t9", policy);
    expect(run.stopped).toBeNull();
    expect(run.actions[0]).toMatchObject({ status: "SUCCEEDED", calls: 3 });
    expect(calls.slice(0, 3).map((c) => [c.runId, c.stepId, c.tool])).toEqual(
      Array(3).fill(["run-1", "a0", "retail.cancel_pending_order"]),
    );
    expect(calls[0]?.args).toEqual({ order_id: "#W1", reason: "ordered by mistake", tenant: "t9" });
    expect(calls[3]?.stepId).toBe("a1");

    const exhausted = scripted(
      Array(3).fill(envelope("FAILED_NO_EFFECT", { error: { code: "NOT_SENT", message: "x" } })),
    );
    const gaveUp = await runTristateAgent(exhausted.execute, task, "run-2", "t9", policy);
    expect(exhausted.calls).toHaveLength(3);
    expect(gaveUp.stopped).toEqual({ at: 0, reason: "gave_up" });
  });

  it("does not repeat a domain refusal (REJECTED: τ-bench's Error: …) and goes on, as the oracle does", async () => {
    const refusal = "Error: non-pending order cannot be cancelled";
    const { calls, execute } = scripted([
      envelope("FAILED_NO_EFFECT", { error: { code: "REJECTED", message: refusal, httpStatus: 200 } }),
      envelope("SUCCEEDED", { result: { output: "{}" } }),
    ]);
    const run = await runTristateAgent(execute, task, "run-3", "t9", policy);
    expect(calls.map((c) => c.stepId)).toEqual(["a0", "a1"]);
    expect(run.actions[0]).toMatchObject({ status: "FAILED_NO_EFFECT", error: "REJECTED", output: refusal, calls: 1 });
    expect(run.stopped).toBeNull();
  });

  it("on UNKNOWN never redoes anything: asks about the same step again and reads the reconciled status", async () => {
    const { calls, execute } = scripted([
      envelope("UNKNOWN", { error: { code: "READ_TIMEOUT", message: "t" } }),
      envelope("SUCCEEDED", { resolution: "found", replayed: true }),
      envelope("SUCCEEDED"),
    ]);
    const run = await runTristateAgent(execute, task, "run-4", "t9", policy);
    expect(calls.map((c) => c.stepId)).toEqual(["a0", "a0", "a1"]);
    expect(run.actions[0]).toMatchObject({ status: "SUCCEEDED", resolution: "found", ambiguous: 1, calls: 2 });
  });

  it("stops the task and reports when the step waits for a human, or stays unresolved", async () => {
    const human = scripted([
      envelope("UNKNOWN", { resolution: "needs_human", error: { code: "NO_PROBE", message: "" } }),
    ]);
    const run = await runTristateAgent(human.execute, task, "run-5", "t9", policy);
    expect(human.calls).toHaveLength(1);
    expect(run.stopped).toEqual({ at: 0, reason: "needs_human" });
    expect(run.actions).toHaveLength(1);

    const stuck = scripted(Array(10).fill(envelope("UNKNOWN", { error: { code: "PROBE_FAILED", message: "" } })));
    const run2 = await runTristateAgent(stuck.execute, task, "run-6", "t9", policy);
    expect(stuck.calls).toHaveLength(policy.maxPolls + 1);
    expect(new Set(stuck.calls.map((c) => c.stepId))).toEqual(new Set(["a0"]));
    expect(run2.stopped).toEqual({ at: 0, reason: "unresolved" });
  });
});

function direct(answers: Awaited<ReturnType<DirectCall>>[]) {
  const urls: string[] = [];
  const call: DirectCall = async (url) => {
    urls.push(url);
    return answers.shift() ?? { status: 200, output: "{}" };
  };
  return { urls, call };
}

const opts = { timeoutMs: 100, maxAttempts: 3, backoffMs: 1 };

describe("baselines", () => {
  it("retry on any error: a new request after a transport error or 5xx, at most 3 attempts", async () => {
    const { urls, call } = direct([
      { error: "timeout" },
      { status: 503, output: undefined },
      { status: 200, output: "{}" },
    ]);
    const run = await runBaselineAgent("retry_any", "http://svc", task, "t9", opts, call);
    expect(urls.slice(0, 3)).toEqual(Array(3).fill("http://svc/retail.t9/tools/cancel_pending_order"));
    expect(run.actions[0]).toMatchObject({ status: "SUCCEEDED", calls: 3, ambiguous: 2 });

    const down = direct([{ error: "ECONNRESET" }, { error: "ECONNRESET" }, { error: "ECONNRESET" }]);
    const run2 = await runBaselineAgent("retry_any", "http://svc", task, "t9", opts, down.call);
    expect(run2.actions[0]).toMatchObject({ status: "FAILED", calls: 3 });
    expect(run2.actions[1]).toMatchObject({ status: "SUCCEEDED" }); // goes on with the next action
  });

  it("retry on any error does not retry a 4xx or a 200 carrying τ-bench's Error: …", async () => {
    const a = direct([{ status: 400, output: undefined }]);
    expect((await runBaselineAgent("retry_any", "http://svc", task, "t9", opts, a.call)).actions[0]).toMatchObject({
      status: "FAILED",
      calls: 1,
    });
    const b = direct([{ status: 200, output: "Error: non-pending order cannot be cancelled" }]);
    expect((await runBaselineAgent("retry_any", "http://svc", task, "t9", opts, b.call)).actions[0]).toMatchObject({
      status: "DOMAIN_ERROR",
      calls: 1,
    });
  });

  it("never retry: one attempt, whatever happens", async () => {
    const { urls, call } = direct([{ error: "timeout" }]);
    const run = await runBaselineAgent("never_retry", "http://svc", task, "t9", opts, call);
    expect(run.actions[0]).toMatchObject({ status: "FAILED", calls: 1, ambiguous: 1 });
    expect(urls).toHaveLength(2);
  });
});
