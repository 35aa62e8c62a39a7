import { callHttp, canon, defineTool } from "@tristate/core";
import { z } from "zod";

/** First element of a JSON array answer, or null. */
const first = (body: unknown): unknown => (Array.isArray(body) && body.length > 0 ? body[0] : null);

/** The source design's `issue_refund`: the payment service honours `Idempotency-Key` and can be looked up by it. */
export function refundTool(baseUrl: string) {
  return defineTool({
    name: "issue_refund",
    kind: "idempotent_by_key",
    args: z.object({
      order_id: z.string().min(1),
      amount: z.union([z.number(), z.string()]),
      currency: z.string().length(3),
      reason: z.string().optional(),
    }),
    identity: { order_id: canon.upper, amount: canon.decimal(2) },
    timeoutMs: 1500,
    describe: (a) =>
      `refund of ${canon.decimal(2)(a.amount, "amount")} ${a.currency.toUpperCase()} on order ${a.order_id.toUpperCase()}`,
    invoke: async (args, ctx) => (await callHttp(ctx, { method: "POST", url: `${baseUrl}/effects`, body: args })).body,
    probe: async (_args, ctx) =>
      first((await callHttp(ctx, { method: "GET", url: `${baseUrl}/effects?clientRef=${ctx.clientRef}` })).body),
    compensation: { tool: "reverse_refund", args: (_a, result) => ({ refund_id: (result as { id?: string })?.id }) },
  });
}

/** `send_email`: the mail service ignores keys, but messages carry the key as a client reference to look up. */
export function emailTool(baseUrl: string) {
  return defineTool({
    name: "send_email",
    kind: "unsafe",
    args: z.object({ to: z.string().email(), template_id: z.string(), order_id: z.string() }),
    identity: { to: canon.lower, template_id: canon.trim },
    timeoutMs: 1500,
    irreversible: true,
    describe: (a) => `e-mail "${a.template_id}" to ${a.to.toLowerCase()}`,
    invoke: async (args, ctx) =>
      (
        await callHttp(ctx, {
          method: "POST",
          url: `${baseUrl}/effects`,
          body: { ...args, clientRef: ctx.idempotencyKey },
        })
      ).body,
    probe: async (_args, ctx) =>
      first((await callHttp(ctx, { method: "GET", url: `${baseUrl}/effects?clientRef=${ctx.clientRef}` })).body),
  });
}

/** `send_sms`: no key support and no lookup — an UNKNOWN can only be settled by a person. */
export function smsTool(baseUrl: string) {
  return defineTool({
    name: "send_sms",
    kind: "unsafe",
    args: z.object({ phone: z.string().min(5), template_id: z.string() }),
    identity: { phone: canon.trim, template_id: canon.trim },
    timeoutMs: 1500,
    irreversible: true,
    describe: (a) => `SMS "${a.template_id}" to ${a.phone}`,
    invoke: async (args, ctx) => (await callHttp(ctx, { method: "POST", url: `${baseUrl}/effects`, body: args })).body,
  });
}
