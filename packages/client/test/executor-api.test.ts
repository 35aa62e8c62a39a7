import { type LocalStack, startLocalStack } from "@tristate/local-stack";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createTristateClient,
  type Envelope,
  TristateBadRequestError,
  type TristateClient,
  TristateForbiddenError,
  TristateNotFoundError,
  TristatePayloadTooLargeError,
  TristateRateLimitedError,
  TristateTransportError,
  TristateUnauthorizedError,
  toModelEnvelope,
  UNKNOWN_ADVICE,
} from "../src/index.ts";

let stack: LocalStack;
let client: TristateClient;
beforeAll(async () => {
  stack = await startLocalStack({ env: { TRISTATE_MAX_BODY_BYTES: "4096", TRISTATE_AUTH_FAILURES: "3" } });
  client = createTristateClient({ url: stack.url, apiKey: stack.agentKey });
});
afterAll(async () => {
  await stack?.close();
});

const refund = (stepId: string, args: Record<string, unknown> = {}) => ({
  runId: "run-client",
  stepId,
  tool: "issue_refund",
  args: { order_id: "A-1182", amount: 49.9, currency: "EUR", reason: "arrived broken", ...args },
  budgetMs: 10_000,
});

/** The same call as plain JSON over HTTP, as the README documents it. */
async function rawExecute(body: unknown): Promise<Envelope> {
  const res = await fetch(`${stack.url}/trpc/calls.execute`, {
    method: "POST",
    headers: { authorization: `Bearer ${stack.agentKey}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return ((await res.json()) as { result: { data: Envelope } }).result.data;
}

describe("@tristate/client against the running executor on PostgreSQL", () => {
  it("execute returns the Envelope as is; a repeat replays it; one refund at the remote", async () => {
    const first = await client.execute(refund("s-1"));
    expect(first).toMatchObject({ status: "SUCCEEDED", retry_safe: true, replayed: false, attempt: 1 });
    const again = await client.execute(refund("s-1", { amount: "49.90", order_id: "a-1182" }));
    // The client adds and drops nothing: byte for byte what the API answers for the same call.
    expect(again).toEqual(await rawExecute(refund("s-1")));
    expect(again).toMatchObject({ status: "SUCCEEDED", replayed: true, idempotency_key: first.idempotency_key });
    expect(stack.remote.effects).toHaveLength(1);
  });

  it("a lost answer is an UNKNOWN envelope with retry_safe false; repeating it reconciles to one refund", async () => {
    stack.loseNextAnswer();
    const before = stack.remote.posts;
    const lost = await client.execute(refund("s-lost", { order_id: "L-1" }));
    expect(lost).toMatchObject({ status: "UNKNOWN", retry_safe: false });
    stack.recover();
    const repeat = await client.execute(refund("s-lost", { order_id: "L-1" }));
    expect(repeat).toMatchObject({ status: "SUCCEEDED", resolution: "found", idempotency_key: lost.idempotency_key });
    expect(stack.remote.posts - before).toBe(1); // probed and found: nothing resent
    expect(stack.remote.effects.filter((e) => e.body.order_id === "L-1")).toHaveLength(1);
  });

  it("a call abandoned after it was sent is UNKNOWN with the repeat advice, and the advice holds: the repeat replays", async () => {
    stack.remote.fault({ respondDelayMs: 800 });
    const call = refund("s-slow", { order_id: "SLOW-1" });
    const error = await client.execute(call, { signal: AbortSignal.timeout(200) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TristateTransportError);
    expect(error).toMatchObject({ outcome: "UNKNOWN", retrySafe: true, procedure: "calls.execute" });
    expect((error as TristateTransportError).advice).toContain(
      "repeat the same call: the executor replays or reconciles",
    );
    expect(toModelEnvelope(error)).toMatchObject({ status: "UNKNOWN", retry_safe: true, message: UNKNOWN_ADVICE });
    await new Promise((r) => setTimeout(r, 1200)); // the executor finishes the call it received
    const repeat = await client.execute(call);
    expect(repeat).toMatchObject({ status: "SUCCEEDED", replayed: true });
    expect(stack.remote.effects.filter((e) => e.body.order_id === "SLOW-1")).toHaveLength(1);
  });

  it("tools, promptRule and get", async () => {
    const tools = await client.tools();
    expect(tools.map((t) => t.name)).toEqual(["issue_refund"]);
    expect(tools[0]).toMatchObject({ kind: "idempotent_by_key", identityFields: ["order_id", "amount"] });
    expect(tools[0]!.argsJsonSchema).toMatchObject({ type: "object", required: ["order_id", "amount"] });
    expect(await client.promptRule()).toMatch(/retry_safe is false/);
    const envelope = await client.execute(refund("s-get", { order_id: "G-1" }));
    const record = await client.get(envelope.idempotency_key);
    expect(record).toMatchObject({ key: envelope.idempotency_key, status: "SUCCEEDED", stepId: "s-get" });
    expect(await client.get({ key: envelope.idempotency_key })).toEqual(record);
  });

  it("declarePlan and abortRun (positional and object forms)", async () => {
    expect(await client.declarePlan("run-plan", [{ stepId: "refund", tool: "issue_refund" }])).toEqual({
      runId: "run-plan",
      steps: 1,
    });
    await client.execute({ ...refund("refund", { order_id: "P-1" }), runId: "run-plan" });
    const report = await client.abortRun("run-plan", { budgetMs: 10_000 });
    expect(report.runId).toBe("run-plan");
    expect(report.steps.map((s) => s.stepId)).toContain("refund");
    expect(typeof report.summary).toBe("string");
    expect(report.abort).toMatchObject({ runId: "run-plan", via: "agent", reason: "" });
    // A later abort keeps the first one's who and why (rule 13); a first abort records its reason.
    expect(await client.abortRun({ runId: "run-plan", reason: "late" })).toMatchObject({
      runId: "run-plan",
      abort: { reason: "" },
    });
    expect(await client.abortRun({ runId: "run-why", reason: "the user cancelled" })).toMatchObject({
      abort: { runId: "run-why", reason: "the user cancelled" },
      complete: true,
    });
    const bad = await client
      .declarePlan({ runId: "run-plan", steps: [{ stepId: "x", tool: "nope" }] })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(TristateBadRequestError);
    expect(bad).toMatchObject({ httpStatus: 400, field: "steps.0.tool" });
  });

  it("the turn's deadline is passed through as deadlineEpochMs (a Deadline-like object too)", async () => {
    const past = await client
      .execute({ ...refund("s-d1"), budgetMs: undefined, deadlineEpochMs: Date.now() - 5000 })
      .catch((e: unknown) => e);
    expect(past).toBeInstanceOf(TristateBadRequestError);
    expect(past).toMatchObject({ field: "deadlineEpochMs" });
    const viaObject = await client
      .execute({ ...refund("s-d2"), budgetMs: undefined, deadline: { epochMs: Date.now() + 3 * 86_400_000 } })
      .catch((e: unknown) => e);
    expect(viaObject).toMatchObject({ httpStatus: 400, field: "deadlineEpochMs" });
    const ok = await client.execute({ ...refund("s-d3"), budgetMs: undefined, deadlineEpochMs: Date.now() + 10_000 });
    expect(ok.status).toBe("SUCCEEDED");
  });

  it("typed errors: 400 with field (and the envelope for bad args), 401, 403, 404, 413, then 429 with Retry-After", async () => {
    const posts = stack.remote.posts;
    const badId = await client.execute({ ...refund("s-e1"), runId: "run 7" }).catch((e: unknown) => e);
    expect(badId).toMatchObject({ name: "TristateBadRequestError", httpStatus: 400, field: "runId" });
    expect(toModelEnvelope(badId)).toBeUndefined(); // the agent's bug, not the model's: rethrown by adapters
    const badArgs = await client.execute(refund("s-e2", { amount: "forty" })).catch((e: unknown) => e);
    expect(badArgs).toBeInstanceOf(TristateBadRequestError);
    expect(badArgs).toMatchObject({ field: "args.amount", procedure: "calls.execute" });
    expect(toModelEnvelope(badArgs)).toMatchObject({ status: "FAILED_NO_EFFECT", retry_safe: true });
    const unknownTool = await client.execute({ ...refund("s-e3"), tool: "issue_refnd" }).catch((e: unknown) => e);
    expect(unknownTool).toBeInstanceOf(TristateNotFoundError);
    expect(unknownTool).toMatchObject({ httpStatus: 404, field: "tool" });
    const noRecord = await client.get("0".repeat(32)).catch((e: unknown) => e);
    expect(noRecord).toMatchObject({ name: "TristateNotFoundError", field: "key" });
    const viewer = createTristateClient({ url: stack.url, apiKey: stack.viewerKey });
    expect(await viewer.execute(refund("s-e4")).catch((e: unknown) => e)).toBeInstanceOf(TristateForbiddenError);
    const big = await client.execute(refund("s-e5", { reason: "x".repeat(10_000) })).catch((e: unknown) => e);
    expect(big).toBeInstanceOf(TristatePayloadTooLargeError);
    expect(stack.remote.posts).toBe(posts); // nothing of the above reached the remote
    const stranger = createTristateClient({ url: stack.url, apiKey: "ts_agent_not-a-real-key-0000000000" });
    expect(await stranger.tools().catch((e: unknown) => e)).toBeInstanceOf(TristateUnauthorizedError);
    let throttled: unknown;
    for (let i = 0; i < 10 && !(throttled instanceof TristateRateLimitedError); i++) {
      throttled = await stranger.tools().catch((e: unknown) => e);
    }
    expect(throttled).toBeInstanceOf(TristateRateLimitedError);
    expect((throttled as TristateRateLimitedError).retryAfterMs).toBeGreaterThan(0);
    expect(await client.tools()).toHaveLength(1); // a valid key is never throttled
  });
});
