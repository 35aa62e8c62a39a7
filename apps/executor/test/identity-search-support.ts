/** Shared by the identity-search tests: a refund call and a search as a given key, over HTTP. */
import { expect } from "vitest";
import type { Json, TestStack } from "./support.ts";

/** One `issue_refund` call (step `s1` of `runId`, `amount` EUR) as `key`; @returns its idempotency key. */
export async function refund(
  stack: TestStack,
  key: string,
  runId: string,
  order: string,
  amount: number,
): Promise<string> {
  const res = await stack.post(
    "calls.execute",
    { runId, stepId: "s1", tool: "issue_refund", args: { order_id: order, amount, currency: "EUR" }, budgetMs: 8000 },
    key,
  );
  expect(res.status, JSON.stringify(res.json)).toBe(200);
  return res.json.result.data.idempotency_key as string;
}

/** The keys of an `intents.byIdentity` answer's items, in order. */
export const keysOf = (res: { json: Json }) => (res.json.result.data.items as Json[]).map((i) => i.key as string);
