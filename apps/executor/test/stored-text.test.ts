/**
 * What the remote answered can always be stored (issue 21 §3), over HTTP against real PostgreSQL:
 * a remote answering 201 with a body holding U+0000 or a lone surrogate — to a `defineTool` invoke,
 * a declarative HTTP tool, or a probe — used to make the outcome write fail forever (the agent got a
 * 500 or a SUCCEEDED the log never held; the record stayed PENDING/UNKNOWN outside the human queue).
 * The text is stored as the literal text of its JSON escape (`\u0000`, `\ud800`); the agent, the
 * record and the remote agree, one effect.
 */
import { refundTool } from "@tristate/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildCatalog } from "../src/catalog/load.ts";
import { type Json, startStack, type TestStack } from "./support.ts";

let stack: TestStack;
beforeAll(async () => {
  stack = await startStack({
    tools: async (remote) => [
      refundTool(remote),
      ...(await buildCatalog({
        httpTools: [
          {
            name: "refund_http",
            kind: "unsafe",
            method: "POST",
            url: `${remote.url}/effects`,
            args: {
              type: "object",
              properties: { order_id: { type: "string" }, amount: { type: ["number", "string"] } },
              required: ["order_id", "amount"],
            },
            identity: { order_id: "upper", amount: "decimal:2" },
            timeoutMs: 1500,
            keyProbe: { url: `${remote.url}/effects?clientRef={key}`, found: { type: "non_empty_array" } },
          },
        ],
      })),
    ],
  });
});
afterAll(async () => {
  await stack?.close();
});

const record = async (key: string): Promise<Json> =>
  (await stack.get("calls.get", { key }, stack.keys.agent)).json.result.data;

const BAD_TEXT = [
  { what: "U+0000", slug: "nul", note: "before\u0000after", stored: "before\\u0000after" },
  { what: "a lone surrogate", slug: "surrogate", note: "before\ud800after", stored: "before\\ud800after" },
];

describe("a 201 whose body holds text jsonb refuses is stored, the agent told, one effect", () => {
  for (const tool of ["issue_refund", "refund_http"]) {
    for (const bad of BAD_TEXT) {
      it(`${tool}: ${bad.what} in the answer`, async () => {
        const before = stack.remote.effects.length;
        stack.remote.fault({ fields: { note: bad.note } });
        const step = `${tool}-${bad.slug}`;
        const res = await stack.post("calls.execute", {
          runId: "run-stored-text",
          stepId: step,
          tool,
          args: { order_id: `ST-${step}`, amount: 5 },
          budgetMs: 10_000,
        });
        expect(res.status).toBe(200);
        const envelope = res.json.result.data;
        expect(envelope).toMatchObject({ status: "SUCCEEDED" });
        const stored = await record(envelope.idempotency_key);
        expect(stored).toMatchObject({ status: "SUCCEEDED", result: { note: bad.stored } });
        expect(stack.remote.effects.length - before).toBe(1);
      });
    }
  }

  it("a probe that finds the effect with such text settles the record (found), the text stored", async () => {
    const before = stack.remote.effects.length;
    stack.remote.fault({ answer: 503, fields: { note: "probe\u0000found" } });
    const call = {
      runId: "run-stored-text",
      stepId: "probe-found",
      tool: "refund_http",
      args: { order_id: "ST-PROBE", amount: 5 },
      budgetMs: 10_000,
    };
    const first = await stack.post("calls.execute", call);
    expect(first.json.result.data).toMatchObject({ status: "UNKNOWN" });
    const again = await stack.post("calls.execute", call);
    expect(again.status).toBe(200);
    // Found: settled, or (a found item whose state the probe does not declare, issue 21 §5) a person's.
    const told = again.json.result.data;
    expect(told.status === "SUCCEEDED" || told.resolution === "needs_human", JSON.stringify(told)).toBe(true);
    const key = first.json.result.data.idempotency_key;
    const stored = await record(key);
    expect(stored.status).toBe(told.status);
    const events = (await stack.service.services.store.prisma.intentEvent.findMany({ where: { key } })).map(
      (e) => e.data,
    );
    expect(JSON.stringify([stored, events])).toContain("probe\\\\u0000found");
    expect(stack.remote.effects.length - before).toBe(1);
  });
});

describe("an outcome write the database refuses for good goes to a person, the agent gets an envelope", () => {
  // A refusal no escaping prevents (as a jsonb over its size limits would be), injected in the real
  // database: a trigger refusing a marked result with SQLSTATE 54000 (program limit exceeded).
  beforeAll(async () => {
    const prisma = stack.service.services.store.prisma;
    await prisma.$executeRawUnsafe(`CREATE FUNCTION refuse_for_good() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.result::text LIKE '%refused-for-good%' THEN
          RAISE EXCEPTION 'injected: this value can never be stored' USING ERRCODE = '54000';
        END IF;
        RETURN NEW;
      END $$`);
    await prisma.$executeRawUnsafe(
      "CREATE TRIGGER refuse_for_good BEFORE UPDATE ON intent_records FOR EACH ROW EXECUTE FUNCTION refuse_for_good()",
    );
  });

  for (const tool of ["refund_http", "issue_refund"]) {
    it(`${tool}: 200 with an envelope, the record UNKNOWN in the human queue with the reason, one effect`, async () => {
      const before = stack.remote.effects.length;
      stack.remote.fault({ fields: { note: "refused-for-good" } });
      const res = await stack.post("calls.execute", {
        runId: "run-stored-text",
        stepId: `${tool}-refused`,
        tool,
        args: { order_id: `RF-${tool}`, amount: 5 },
        budgetMs: 10_000,
      });
      expect(res.status).toBe(200);
      const envelope = res.json.result.data;
      // A durable write answers after it: the person's record. A background one (issue_refund) told
      // the agent SUCCEEDED from the remote's answer before the write, which then went to a person.
      expect(envelope.status).toBe(tool === "refund_http" ? "UNKNOWN" : "SUCCEEDED");
      if (tool === "refund_http") expect(envelope).toMatchObject({ retry_safe: false, resolution: "needs_human" });
      const stored = await record(envelope.idempotency_key);
      expect(stored).toMatchObject({ status: "UNKNOWN", resolution: "needs_human" });
      expect(stored.error).toMatchObject({ code: "OUTCOME_NOT_STORABLE" });
      expect(stored.error.message).toMatch(/remote answered that the effect happened.*54000/);
      const queue = await stack.get("queue.list", undefined, stack.keys.operator);
      expect(queue.json.result.data.items.map((i: Json) => i.key)).toContain(envelope.idempotency_key);
      expect(stack.remote.effects.length - before).toBe(1);
    });
  }

  it("a probe's find the database refuses for good: the record goes to a person, the agent gets an envelope", async () => {
    const before = stack.remote.effects.length;
    stack.remote.fault({ answer: 503, fields: { note: "refused-for-good" } });
    const call = {
      runId: "run-stored-text",
      stepId: "probe-refused",
      tool: "issue_refund",
      args: { order_id: "RF-PROBE", amount: 5 },
      budgetMs: 10_000,
    };
    const answers = [await stack.post("calls.execute", call), await stack.post("calls.execute", call)];
    for (const res of answers) expect(res.status).toBe(200);
    const key = answers[0]?.json.result.data.idempotency_key;
    const stored = await record(key);
    expect(stored).toMatchObject({
      status: "UNKNOWN",
      resolution: "needs_human",
      error: { code: "OUTCOME_NOT_STORABLE" },
    });
    expect(stored.error.message).toMatch(/a probe found the effect.*54000/);
    expect(stack.remote.effects.length - before).toBe(1);
  });
});
