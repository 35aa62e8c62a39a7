import { describe, expect, it } from "vitest";
import { z } from "zod";
import { canon } from "./canon.ts";
import { Deadline } from "./deadline.ts";
import { RejectedError } from "./errors.ts";
import { createExecutor } from "./executor.ts";
import { MemoryIntentStore } from "./memory-intent-store.ts";
import { redactArgs } from "./redact.ts";
import { maskSecret, secretMasker } from "./secrets.ts";
import { defineTool } from "./tool.ts";

const CARD = "4111111111111111";
const CVV = "737";

const base = {
  name: "charge_card",
  kind: "idempotent_by_key" as const,
  identity: { order_id: canon.upper },
  timeoutMs: 500,
  invoke: async () => ({}),
};

describe("defineTool secretFields", () => {
  it("accepts dot paths and keeps them", () => {
    const tool = defineTool({
      ...base,
      secretFields: ["card_number", "payment.card.cvv"],
      loggableFields: ["order_id"],
    });
    expect(tool.secretFields).toEqual(["card_number", "payment.card.cvv"]);
  });

  it.each([
    [{ secretFields: "card_number" }, "secretFields must be an array"],
    [{ secretFields: [""] }, "secretFields.0 must be a dot path"],
    [{ secretFields: ["card..number"] }, "secretFields.0 must be a dot path"],
    [{ secretFields: [42] }, "secretFields.0 must be a dot path"],
    [{ secretFields: ["cvv", "cvv"] }, 'secretFields.1 "cvv" is listed twice'],
    [{ secretFields: ["card_number"], loggableFields: ["card_number"] }, '"card_number" is secret'],
    [{ secretFields: ["card"], loggableFields: ["card.brand"] }, 'loggableFields has "card.brand"'],
    [{ secretFields: ["card.number"], loggableFields: ["card"] }, 'loggableFields has "card"'],
  ])("refuses %j naming the field", (extra, message) => {
    expect(() => defineTool({ ...base, ...(extra as object) })).toThrow(message);
  });
});

describe("maskSecret and secretMasker", () => {
  it("shows the last 4 characters of a long secret only", () => {
    expect(maskSecret(CARD)).toBe("***1111");
    expect(maskSecret(4111111111111111)).toBe("***1111");
    expect(maskSecret(CVV)).toBe("***");
    expect(maskSecret({ number: CARD })).toBe("***");
  });

  it("masks secret paths in args and identity, and the values anywhere else", () => {
    const args = { order_id: "A-1", card_number: CARD, payment: { cvv: CVV, note: `card ${CARD}` } };
    const m = secretMasker({ secretFields: ["card_number", "payment.cvv"] }, args);
    expect(m.active).toBe(true);
    expect(m.args(args)).toEqual({
      order_id: "A-1",
      card_number: "***1111",
      payment: { cvv: "***", note: "card ***1111" },
    });
    expect(args.card_number).toBe(CARD); // the input is not changed
    expect(m.identity({ order_id: "A-1", card_number: CARD })).toEqual({ order_id: "A-1", card_number: "***1111" });
    expect(m.value({ echoed: [`charged ${encodeURIComponent(CARD)}`], n: 737, [CARD]: 1 })).toEqual({
      echoed: ["charged ***1111"],
      n: "***",
      "***1111": 1,
    });
    expect(m.text("GET /cards/4111111111111111?cvv=737 failed")).toBe("GET /cards/***1111?cvv=*** failed");
    // Whole values only: a longer number that merely contains the CVV stays.
    expect(m.text("HTTP 7370")).toBe("HTTP 7370");
  });

  it("does nothing without secret fields or values", () => {
    const args = { order_id: "A-1", card_number: CARD };
    expect(secretMasker(undefined, args).args(args)).toBe(args);
    expect(secretMasker({}, args).active).toBe(false);
    expect(secretMasker({ secretFields: ["cvv"] }, args).active).toBe(false);
  });
});

describe("redactArgs and secret fields", () => {
  it("redacts a secret even when short or equal to a loggable value", () => {
    const args = { order_id: "73", pin: "73", cvv: "12" };
    const tool = { loggableFields: ["order_id"], secretFields: ["pin", "cvv"] };
    expect(redactArgs(tool, args, "order 73 pin 12 failed")).toBe("order {pin} pin {cvv} failed");
  });
});

describe("a secret value never appears in a stored event or error message", () => {
  const chargeArgs = z.object({ order_id: z.string(), card_number: z.string(), cvv: z.string() });
  const ARGS = { order_id: "ORD-9", card_number: CARD, cvv: CVV };
  const FORMS = [CARD, "4111 1111", encodeURIComponent(CARD), CVV];
  const leaks = (text: string) => FORMS.filter((f) => text.includes(f));

  async function run(failure: "rejected" | "unknown") {
    const store = new MemoryIntentStore();
    const tool = defineTool({
      ...base,
      args: chargeArgs,
      secretFields: ["card_number", "cvv"],
      loggableFields: ["order_id"],
      invoke: async (a) => {
        const echo = `card ${a.card_number} (${encodeURIComponent(a.card_number)}) cvv ${a.cvv} for ${a.order_id}`;
        if (failure === "rejected") throw new RejectedError(`declined: ${echo}`, { httpStatus: 402 });
        throw new Error(`connection reset while charging ${echo}`);
      },
      probe: async (a) => {
        throw new Error(`lookup of card ${a.card_number} cvv ${a.cvv} failed`);
      },
    });
    const ex = createExecutor({ store, tools: [tool], probe: { spacingMs: 1, attempts: 2, timeoutMs: 200 } });
    const env = await ex.call({
      runId: "run-s",
      stepId: "charge",
      tool: "charge_card",
      args: ARGS,
      deadline: Deadline.after(8_000),
    });
    if (failure === "unknown") await ex.reconcileKey(env.idempotency_key, Deadline.after(8_000), "sweeper");
    const record = (await store.get(env.idempotency_key))!;
    const events = await store.listEvents(env.idempotency_key);
    return { env, record, events };
  }

  it("a refusal echoing the card: the record's error and every event are clean, the args keep it", async () => {
    const { env, record, events } = await run("rejected");
    expect(env.status).toBe("FAILED_NO_EFFECT");
    expect(record.error?.message).toContain("{card_number}");
    expect(record.error?.message).toContain("ORD-9");
    expect(leaks(JSON.stringify(record.error))).toEqual([]);
    expect(leaks(JSON.stringify(events.map((e) => e.data)))).toEqual([]);
    expect(leaks(JSON.stringify(env.error))).toEqual([]);
    expect(record.args).toMatchObject({ card_number: CARD, cvv: CVV });
  });

  it("an UNKNOWN send and failing probes echoing the card (and a sweep): nothing stored holds it", async () => {
    const { env, record, events } = await run("unknown");
    expect(env.status).toBe("UNKNOWN");
    const probeErrors = events.filter((e) => e.type === "probe" && e.data.answer === "failed");
    expect(probeErrors.length).toBeGreaterThan(0);
    expect(String(probeErrors[0]?.data.error)).toContain("{card_number}");
    expect(leaks(JSON.stringify(record.error))).toEqual([]);
    expect(leaks(JSON.stringify(events.map((e) => e.data)))).toEqual([]);
    expect(record.args).toMatchObject({ card_number: CARD });
  });
});
