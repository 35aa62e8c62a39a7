// A tool author's tool, run by an embedder's executor: the executor keys the call, records it,
// and answers with an envelope the model reads. Run: `pnpm --filter @tristate/core exec tsx examples/tools.ts`.
import { MemoryIntentStore } from "@tristate/core/store";
import { canon, createExecutor, Deadline, defineTool } from "@tristate/core/tools";
import { z } from "zod";

const refunds = new Map<string, { id: string; amount: string }>(); // the "remote", keyed like Stripe
const issueRefund = defineTool({
  name: "issue_refund",
  kind: "idempotent_by_key",
  args: z.object({ order_id: z.string(), amount: z.number() }),
  identity: { order_id: canon.upper, amount: canon.decimal(2) },
  timeoutMs: 1_000,
  invoke: async (args, ctx) => {
    const id = `RF-${refunds.size + 1}`;
    if (!refunds.has(ctx.idempotencyKey)) refunds.set(ctx.idempotencyKey, { id, amount: String(args.amount) });
    return refunds.get(ctx.idempotencyKey);
  },
  probe: async (_args, ctx) => refunds.get(ctx.clientRef) ?? null,
});

const executor = createExecutor({ store: new MemoryIntentStore(), tools: [issueRefund] });
const call = { runId: "run-1", stepId: "step-1", tool: "issue_refund", args: { order_id: "a-1", amount: 49.9 } };
const first = await executor.call({ ...call, deadline: Deadline.after(5_000) });
const again = await executor.call({ ...call, deadline: Deadline.after(5_000) }); // the model asks twice

export const envelopes = [first, again];
console.log(first.status, again.status, again.replayed, refunds.size); // SUCCEEDED SUCCEEDED true 1
