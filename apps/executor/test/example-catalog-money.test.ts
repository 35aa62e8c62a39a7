import { resolve } from "node:path";
import { type FakeRemote, startFakeRemote } from "@tristate/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCatalog } from "../src/catalog/load.ts";
import { readEnv } from "../src/env.ts";
import { startStack, type TestStack } from "./support.ts";

// Issue 10, "Also": the example refund tool accepted -50, 1e300, "1e309" and "1e-400" and sent them.
// The example catalog (tristate.config.ts) now declares the amount as money: positive, bounded
// (0.01–10000), and as text a plain decimal with at most two decimals.

const CONFIG = resolve(import.meta.dirname, "../../../tristate.config.ts");

let payments: FakeRemote;
let stack: TestStack;
beforeAll(async () => {
  payments = await startFakeRemote({ honorsKey: true });
  const tools = await loadCatalog(CONFIG, readEnv({ TRISTATE_PAYMENTS_URL: payments.url }));
  stack = await startStack({ tools: () => tools });
});
afterAll(async () => {
  await stack?.close();
  await payments?.close();
});

let step = 0;
const refund = (amount: unknown, over: Record<string, unknown> = {}) =>
  stack.post("calls.execute", {
    runId: "run-money",
    stepId: `step-${++step}`,
    tool: "issue_refund",
    args: { order_id: `A-${step}`, amount, currency: "EUR", reason: "arrived broken", ...over },
    budgetMs: 10_000,
  });

async function records(): Promise<number> {
  const [row] = await stack.service.services.store.prisma.$queryRawUnsafe<{ n: number }[]>(
    "SELECT count(*)::int AS n FROM intent_records",
  );
  return row!.n;
}

describe("the example catalog's refund amount is money (POST /trpc/calls.execute)", () => {
  it("refuses the review's amounts and other non-money with 400 naming args.amount; nothing written or sent", async () => {
    const before = { records: await records(), sends: payments.posts };
    const bad: unknown[] = [
      -50,
      1e300,
      "1e309",
      "1e-400",
      0,
      "0.00",
      -0.01,
      "-50",
      10_000.01,
      "10000.01",
      "49.999",
      0.015, // a number's third decimal: refused, not rounded into 0.02's key (review finding)
      9999.999,
      "049.90",
      " 49.90",
      "1,000",
      "",
      "NaN",
      "Infinity",
      true,
    ];
    for (const amount of bad) {
      const res = await refund(amount);
      expect({ amount, status: res.status, field: res.json.error?.data?.field }).toEqual({
        amount,
        status: 400,
        field: "args.amount",
      });
      expect(res.json.error.message).toMatch(/^args\.amount: /);
    }
    // JSON's 1e309 is Infinity for the parser: refused too.
    const overflow = await stack.post(
      "calls.execute",
      `{"runId":"run-money","stepId":"inf","tool":"issue_refund","args":{"order_id":"A-9","amount":1e309,"currency":"EUR"},"budgetMs":10000}`,
    );
    expect({ status: overflow.status, field: overflow.json.error?.data?.field }).toEqual({
      status: 400,
      field: "args.amount",
    });
    expect({ records: await records(), sends: payments.posts }).toEqual(before);
  });

  it("accepts money as a number or a plain decimal string, and sends exactly it", async () => {
    for (const amount of [49.9, "49.90", 0.01, "0.01", 10_000, "10000.00", "1", 120.5]) {
      const res = await refund(amount);
      expect({ amount, status: res.status, outcome: res.json.result?.data?.status }).toEqual({
        amount,
        status: 200,
        outcome: "SUCCEEDED",
      });
      expect(payments.bodiesSeen.at(-1)).toMatchObject({ amount });
    }
  });

  it("the currency is three capitals, and tools.list shows the money rules to the model", async () => {
    for (const currency of ["eur", "EURO", "E1R"]) {
      const res = await refund("10.00", { currency });
      expect({ currency, status: res.status, field: res.json.error?.data?.field }).toEqual({
        currency,
        status: 400,
        field: "args.currency",
      });
    }
    const tools = await stack.get("tools.list", undefined, stack.keys.agent);
    const refundTool = tools.json.result.data.find((t: { name: string }) => t.name === "issue_refund");
    const amount = JSON.stringify(refundTool.argsJsonSchema.properties.amount);
    expect(amount).toContain('"minimum":0.01');
    expect(amount).toContain('"maximum":10000');
    expect(amount).toContain('"pattern"');
    expect(amount).toContain('"multipleOf":0.01');
  });
});
