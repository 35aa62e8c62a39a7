/**
 * The scenario every adapter test drives through its SDK: a refund whose first answer is lost (the
 * remote commits it, resets the connection, and its lookups fail), and a model that calls the refund
 * again after the UNKNOWN, rephrasing the arguments as models do.
 */
import { expect } from "vitest";

/** The model's first call. */
export const FIRST_ARGS = { order_id: "A-1182", amount: 49.9, currency: "EUR", reason: "arrived broken" };
/** The model's retry after the UNKNOWN: the same refund, worded differently (same identity). */
export const RETRY_ARGS = { order_id: "a-1182", amount: "49.90", currency: "EUR", reason: "broken on arrival" };

/** The envelope fields the assertions read. */
export interface SeenEnvelope {
  status: string;
  retry_safe: boolean;
  idempotency_key: string;
  message: string;
  resolution?: string;
}

/** Parses a tool result the model was shown (a JSON string or an object) as an envelope. */
export function asEnvelope(value: unknown): SeenEnvelope {
  const parsed = typeof value === "string" ? JSON.parse(value) : value;
  expect(parsed).toMatchObject({ status: expect.any(String), retry_safe: expect.any(Boolean) });
  return parsed as SeenEnvelope;
}

/**
 * The invariants: the model was told UNKNOWN with `retry_safe: false` after the lost answer; its
 * retry was reconciled (found, SUCCEEDED, same key) instead of resent; the remote made one refund.
 */
export function expectOneRefundAndHonestResults(
  remote: { effects: { body: Record<string, unknown> }[]; posts: number },
  postsBefore: number,
  afterFirst: SeenEnvelope,
  afterRetry: SeenEnvelope,
): void {
  expect(afterFirst).toMatchObject({ status: "UNKNOWN", retry_safe: false });
  expect(afterFirst.idempotency_key).toMatch(/^[0-9a-f]{32}$/);
  expect(afterRetry).toMatchObject({
    status: "SUCCEEDED",
    retry_safe: true,
    resolution: "found",
    idempotency_key: afterFirst.idempotency_key,
  });
  expect(remote.effects.filter((e) => String(e.body.order_id).toUpperCase() === "A-1182")).toHaveLength(1);
  expect(remote.posts - postsBefore).toBe(1); // the retry probed and found it: nothing was sent again
}
