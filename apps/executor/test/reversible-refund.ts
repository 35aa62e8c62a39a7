/**
 * The refund with a compensation, as the saga, runs-list and operator-abort tests use it:
 * `issue_refund` (core's testing refund) compensated by `reverse_refund`, an idempotent-by-key
 * reversal on the same fake remote (its effects carry `kind: "reversal"`), with a key probe.
 */
import { type AnyTool, callHttp, canon, defineTool } from "@tristate/core";
import { type FakeRemote, refundTool } from "@tristate/testing";
import { z } from "zod";

/** `reverse_refund` on `remote`: `{ refund_id }`, keyed, probed by its client reference. */
export function reverseRefundTool(remote: FakeRemote): AnyTool {
  return defineTool({
    name: "reverse_refund",
    kind: "idempotent_by_key",
    args: z.object({ refund_id: z.string() }),
    identity: { refund_id: canon.exact },
    timeoutMs: 1000,
    invoke: async (args, ctx) =>
      (await callHttp(ctx, { method: "POST", url: `${remote.url}/effects`, body: { ...args, kind: "reversal" } })).body,
    probe: async (_a, ctx) => {
      const list = (await callHttp(ctx, { method: "GET", url: `${remote.url}/effects?clientRef=${ctx.clientRef}` }))
        .body as unknown[];
      return list[0] ?? null;
    },
  });
}

/** `issue_refund` compensated by `reverse_refund`; `options` go to the refund (e.g. a confirmation policy). */
export function reversibleRefundTools(remote: FakeRemote, options: Parameters<typeof refundTool>[1] = {}): AnyTool[] {
  return [
    refundTool(remote, {
      compensation: { tool: "reverse_refund", args: (_a, result) => ({ refund_id: (result as { id: string }).id }) },
      ...options,
    }),
    reverseRefundTool(remote),
  ];
}
