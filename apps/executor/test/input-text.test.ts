import { refundTool } from "@tristate/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appRouter } from "../src/trpc/router.ts";
import { type Json, startStack, type TestStack } from "./support.ts";

// Issue 10, "API hardening": strings PostgreSQL cannot hold (NUL, lone surrogates) answered 500.
// Every string of every procedure's input is now refused with a 400 naming the field and the rule.

const NUL = "a\u0000b";
const HIGH = "a\ud800b"; // a high surrogate with no low one after it
const LOW = "\udc00z"; // a low surrogate with no high one before it
const NUL_RULE = "must not contain NUL (U+0000)";
const SURROGATE_RULE = "must be well-formed Unicode (no lone surrogate: an unpaired \\uD800–\\uDFFF)";

let stack: TestStack;
beforeAll(async () => {
  stack = await startStack({
    tools: (remote) => [
      refundTool(remote),
      // No probe: an ambiguous answer goes straight to the human queue.
      refundTool(remote, { name: "refund_unsafe", kind: "unsafe", probe: undefined, probeByIdentity: undefined }),
    ],
  });
});
afterAll(async () => {
  await stack?.close();
});

/** Everything a request could have written: records, events, audit rows, plans, keys, and sends. */
async function written(): Promise<Record<string, number>> {
  const [row] = await stack.service.services.store.prisma.$queryRawUnsafe<Record<string, number>[]>(
    `SELECT (SELECT count(*) FROM intent_records)::int AS records, (SELECT count(*) FROM intent_events)::int AS events,
            (SELECT count(*) FROM audit_entries)::int AS audit, (SELECT count(*) FROM run_plans)::int AS plans,
            (SELECT count(*) FROM api_keys)::int AS keys`,
  );
  return { ...row, sends: stack.remote.posts };
}

/** Asserts a 400 naming `field` and breaking `rule`, with the message `<field>: <rule>`. */
function expectRefused(res: { status: number; json: Json }, field: string, rule: string): void {
  expect(res.status, JSON.stringify(res.json)).toBe(400);
  expect(res.json.error.data).toMatchObject({ code: "BAD_REQUEST", httpStatus: 400, field });
  expect(res.json.error.message).toBe(`${field}: ${rule}`);
}

const refund = (stepId: string, over: Record<string, unknown> = {}, args: Record<string, unknown> = {}) => ({
  runId: "run-text",
  stepId,
  tool: "issue_refund",
  args: { order_id: "A-1182", amount: 49.9, currency: "EUR", reason: "broken", ...args },
  budgetMs: 10_000,
  ...over,
});

describe("strings with NUL or a lone surrogate: 400 naming the field and the rule, nothing written", () => {
  it("the review's six inputs: lone surrogates in args, NUL in tool, NUL or a lone surrogate in note", async () => {
    // A record waiting for a person, so a resolve with a good note would write (audit row, event, version).
    stack.remote.fault({ answer: 504, commit: false });
    const queued = await stack.post("calls.execute", refund("q-1", { tool: "refund_unsafe" }));
    expect(queued.json.result.data.status).toBe("UNKNOWN");
    const key = queued.json.result.data.idempotency_key;
    const before = await written();
    const recordBefore = (await stack.get("calls.get", { key }, stack.keys.agent)).json.result.data;
    expect(recordBefore).toMatchObject({ status: "UNKNOWN", needsHuman: true });

    expectRefused(await stack.post("calls.execute", refund("s1", {}, { reason: HIGH })), "args.reason", SURROGATE_RULE);
    expectRefused(
      await stack.post("calls.execute", refund("s2", {}, { order_id: LOW })),
      "args.order_id",
      SURROGATE_RULE,
    );
    expectRefused(await stack.post("calls.execute", refund("s3", { tool: `issue_refund${NUL}` })), "tool", NUL_RULE);
    // In the arguments, the refusal carries the INVALID_ARGUMENTS envelope for the model (as a schema refusal does).
    const inArgs = await stack.post("calls.execute", refund("s4", {}, { reason: NUL }));
    expectRefused(inArgs, "args.reason", NUL_RULE);
    expect(inArgs.json.error.data.detail).toMatchObject({
      status: "FAILED_NO_EFFECT",
      retry_safe: true,
      idempotency_key: "",
      error: { code: "INVALID_ARGUMENTS", field: "reason", rule: NUL_RULE },
    });
    for (const [note, rule] of [
      [`checked with the bank${NUL}`, NUL_RULE],
      [`checked ${HIGH}`, SURROGATE_RULE],
      [LOW, SURROGATE_RULE],
    ] as const) {
      const resolve = {
        key,
        action: "mark_succeeded",
        note,
        expectedVersion: recordBefore.version,
        operatorActionId: crypto.randomUUID(),
      };
      expectRefused(await stack.post("queue.resolve", resolve, stack.keys.operator), "note", rule);
    }
    expect(await written()).toEqual(before);
    expect((await stack.get("calls.get", { key }, stack.keys.agent)).json.result.data).toEqual(recordBefore);
  });

  it("every string of every input, at any depth, property names included; queries too", async () => {
    const before = await written();
    const { agent, operator, admin } = stack.keys;
    const cases: [method: "post" | "get", path: string, input: unknown, key: string, field: string, rule: string][] = [
      ["post", "calls.execute", refund("s", { runId: NUL }), agent, "runId", NUL_RULE],
      ["post", "calls.execute", refund(`s${HIGH}`), agent, "stepId", SURROGATE_RULE],
      ["post", "calls.execute", refund("s", { confirmationToken: NUL }), agent, "confirmationToken", NUL_RULE],
      [
        "post",
        "calls.execute",
        refund("s", {}, { meta: { tags: ["ok", LOW] } }),
        agent,
        "args.meta.tags.1",
        SURROGATE_RULE,
      ],
      [
        "post",
        "calls.execute",
        refund("s", {}, { [`re${NUL}ason`]: "x" }),
        agent,
        "args",
        `property names ${NUL_RULE}`,
      ],
      [
        "post",
        "calls.execute",
        refund("s", {}, { meta: { [HIGH]: 1 } }),
        agent,
        "args.meta",
        `property names ${SURROGATE_RULE}`,
      ],
      ["post", "calls.execute", JSON.stringify(NUL), agent, "input", NUL_RULE], // the body is the string itself
      ["post", "runs.plan", { runId: "run-p", steps: [{ stepId: "a", tool: NUL }] }, agent, "steps.0.tool", NUL_RULE],
      ["post", "runs.abort", { runId: HIGH }, agent, "runId", SURROGATE_RULE],
      ["get", "runs.get", { runId: NUL }, admin, "runId", NUL_RULE],
      ["get", "calls.get", { key: LOW }, agent, "key", SURROGATE_RULE],
      ["get", "intents.list", { filters: { tool: NUL } }, admin, "filters.tool", NUL_RULE],
      ["get", "intents.list", { cursor: HIGH }, admin, "cursor", SURROGATE_RULE],
      ["get", "intents.get", { key: NUL }, admin, "key", NUL_RULE],
      ["get", "queue.list", { tool: NUL }, operator, "tool", NUL_RULE],
      ["get", "audit.list", { operator: HIGH }, operator, "operator", SURROGATE_RULE],
      ["post", "probe.rerun", { key: NUL }, operator, "key", NUL_RULE],
      ["post", "queue.resolve", { key: NUL, note: "n" }, operator, "key", NUL_RULE],
      [
        "post",
        "queue.resolve",
        {
          key: "0".repeat(32),
          action: "mark_succeeded",
          note: "ok",
          expectedVersion: 1,
          operatorActionId: `op-${NUL}-1`,
        },
        operator,
        "operatorActionId",
        NUL_RULE,
      ],
      [
        "post",
        "confirmations.issue",
        { runId: "r", stepId: "s", tool: "issue_refund", args: { order_id: NUL, amount: 1 } },
        operator,
        "args.order_id",
        NUL_RULE,
      ],
      ["post", "keys.create", { name: `bot${NUL}`, role: "agent" }, admin, "name", NUL_RULE],
      ["post", "keys.create", { name: `bot${LOW}`, role: "agent" }, admin, "name", SURROGATE_RULE],
      ["post", "keys.revoke", { id: HIGH }, admin, "id", SURROGATE_RULE],
    ];
    for (const [method, path, input, key, field, rule] of cases) {
      const res = method === "post" ? await stack.post(path, input, key) : await stack.get(path, input, key);
      expectRefused(res, field, rule);
    }
    expect(await written()).toEqual(before);
  });

  it("every procedure of the router checks (so a new procedure cannot ship unchecked)", async () => {
    const procedures = Object.entries(
      appRouter._def.procedures as unknown as Record<string, { _def: { type: string } }>,
    );
    expect(procedures.length).toBeGreaterThanOrEqual(20);
    const before = await written();
    for (const [path, procedure] of procedures) {
      const input = { deep: { list: ["fine", `x${NUL}`] } };
      // An admin key passes every role check, so the answer is the input check's.
      const res =
        procedure._def.type === "mutation"
          ? await stack.post(path, input, stack.keys.admin)
          : await stack.get(path, input, stack.keys.admin);
      expect({ path, status: res.status, field: res.json.error?.data?.field }).toEqual({
        path,
        status: 400,
        field: "deep.list.1",
      });
      expect(res.json.error.message).toBe(`deep.list.1: ${NUL_RULE}`);
    }
    expect(await written()).toEqual(before);
  });

  it("a caller without a valid key or the role still gets 401/403 first", async () => {
    expect((await stack.post("calls.execute", refund("k1", { tool: NUL }), null)).status).toBe(401);
    expect(
      (await stack.post("calls.execute", refund("k2", { tool: NUL }), "ts_agent_not-a-real-key-00000")).status,
    ).toBe(401);
    expect((await stack.post("calls.execute", refund("k3", { tool: NUL }), stack.keys.viewer)).status).toBe(403);
  });

  it("well-formed text passes: paired surrogates (emoji), other control characters, any script", async () => {
    const res = await stack.post(
      "calls.execute",
      refund("ok-1", {}, { reason: "arrived 🚀 broken\t\u0001 — Größe 大" }),
    );
    expect(res.status).toBe(200);
    expect(res.json.result.data.status).toBe("SUCCEEDED");
    const record = await stack.get("calls.get", { key: res.json.result.data.idempotency_key }, stack.keys.agent);
    expect(record.json.result.data.args.reason).toBe("arrived 🚀 broken\t\u0001 — Größe 大");
  });
});
