import { type AnyTool, callHttp, canon, defineTool, type ToolSpec } from "@tristate/core";
import { z } from "zod";
import type { FakeRemote } from "./fake-remote.ts";

/** Arguments of the source design's `issue_refund` tool. */
export const refundArgs = z.object({
  order_id: z.string().min(1),
  amount: z.union([z.number(), z.string()]),
  currency: z.string().length(3).optional(),
  reason: z.string().optional(),
});

/**
 * The source design's `issue_refund` against a {@link FakeRemote}: identity `order_id` (upper) and
 * `amount` (2-place decimal), key probe by client reference and identity probe by order and amount.
 * `overrides` replace any field (e.g. `kind: "unsafe"`, `probe: undefined`).
 */
export function refundTool(remote: FakeRemote, overrides: Partial<ToolSpec<z.infer<typeof refundArgs>>> = {}): AnyTool {
  return defineTool({
    name: "issue_refund",
    kind: "idempotent_by_key",
    args: refundArgs,
    identity: { order_id: canon.upper, amount: canon.decimal(2) },
    timeoutMs: 500,
    describe: (a) =>
      `refund of ${canon.decimal(2)(a.amount, "amount")} ${a.currency ?? "EUR"} on order ${a.order_id.toUpperCase()}`,
    invoke: async (args, ctx) =>
      (await callHttp(ctx, { method: "POST", url: `${remote.url}/effects`, body: args })).body,
    probe: async (_args, ctx) => {
      const res = await callHttp(ctx, {
        method: "GET",
        url: `${remote.url}/effects?clientRef=${encodeURIComponent(ctx.clientRef)}`,
      });
      const list = res.body as unknown[];
      return list[0] ?? null;
    },
    probeByIdentity: async (args, ctx) => {
      const q = new URLSearchParams({
        order_id: args.order_id,
        amount: String(args.amount),
        since: String(ctx.sinceEpochMs),
      });
      const res = await callHttp(ctx, { method: "GET", url: `${remote.url}/effects/search?${q}` });
      const list = res.body as unknown[];
      return list[0] ?? null;
    },
    ...overrides,
  });
}
