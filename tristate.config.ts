/**
 * The example tool catalog (`TRISTATE_CONFIG=tristate.config.ts`, relative to the working directory):
 * the source design's `issue_refund` as a declarative HTTP tool (with its compensation
 * `reverse_refund`) and `send_email` declared in code with `defineTool`.
 *
 * The remotes' base URLs come from the service's configuration: `TRISTATE_PAYMENTS_URL` (default
 * http://127.0.0.1:4201) and `TRISTATE_MAIL_URL` (default http://127.0.0.1:4202). Their API is the one
 * of `startFakeRemote` from `@tristate/executor/demo-remotes`: `POST /effects` performs an effect,
 * `GET /effects?clientRef=<key>` finds it by idempotency key / client reference, and
 * `GET /effects/search?<field>=<value>&since=<epoch ms>` finds it by business identity.
 */
import { callHttp, canon, defineCatalog, defineTool, type HttpToolDeclaration, z } from "@tristate/executor/catalog";

/**
 * A refund amount written as text: 0.01 to 10000.00, digits with at most two decimals (no sign,
 * exponent, spaces or leading zeros), and not zero.
 */
const MONEY_PATTERN = "^(?!0(?:\\.0{1,2})?$)(?:(?:0|[1-9]\\d{0,3})(?:\\.\\d{1,2})?|10000(?:\\.0{1,2})?)$";

/** What the payment service's `state` field means (a probe's find proves delivery; this tells the effect). */
const paymentState = { field: "state", done: ["succeeded"], failed: ["failed"], pending: ["pending"] };

export default defineCatalog((env) => {
  const payments = env.TRISTATE_PAYMENTS_URL.replace(/\/+$/, "");
  const mail = env.TRISTATE_MAIL_URL.replace(/\/+$/, "");

  /** `send_email`: the mail service ignores keys, but stores the key we send as the message's client reference. */
  const sendEmail = defineTool({
    name: "send_email",
    description: "E-mail a customer using a template. Cannot be undone: send it last.",
    kind: "unsafe",
    // Strict: a misspelt key (`templat_id`) is refused naming it, never dropped.
    args: z.strictObject({
      to: z.email(),
      template_id: z.string().min(1),
      order_id: z.string().min(1).optional(),
    }),
    identity: { to: canon.lower, template_id: canon.trim },
    timeoutMs: 1500,
    irreversible: true,
    loggableFields: ["template_id"],
    describe: (a) => `e-mail "${a.template_id}" to ${a.to.toLowerCase()}`,
    invoke: async (args, ctx) => {
      // No Idempotency-Key header (the remote ignores it); the key travels as a client reference.
      const { idempotencyKey, ...rest } = ctx;
      const res = await callHttp(rest, {
        method: "POST",
        url: `${mail}/effects`,
        body: { ...args, clientRef: idempotencyKey },
      });
      return res.body;
    },
    probe: async (_args, ctx) => {
      const res = await callHttp(ctx, {
        method: "GET",
        url: `${mail}/effects?clientRef=${encodeURIComponent(ctx.clientRef)}`,
      });
      return Array.isArray(res.body) && res.body.length > 0 ? res.body[0] : null;
    },
  });

  const httpTools: HttpToolDeclaration[] = [
    {
      name: "issue_refund",
      description: "Refund part or all of an order's payment to the customer.",
      kind: "idempotent_by_key",
      method: "POST",
      url: `${payments}/effects`,
      args: {
        type: "object",
        properties: {
          order_id: { type: "string", minLength: 1, maxLength: 64, description: "The order to refund, e.g. A-1182" },
          // Money: positive, bounded, at most two decimals. A string (the exact form) must be a plain
          // decimal from 0.01 to 10000.00: no sign, exponent or third decimal. A number is held to
          // 0.01–10000 in steps of 0.01 (0.015 and 9999.999 are refused, never rounded into another
          // amount's key). -50, 1e300, "1e309" and "1e-400" are refused.
          amount: {
            type: ["number", "string"],
            minimum: 0.01,
            maximum: 10_000,
            multipleOf: 0.01,
            pattern: MONEY_PATTERN,
            description: 'Amount in major units, 0.01 to 10000.00 with at most two decimals, e.g. "49.90" or 49.9',
          },
          currency: { type: "string", pattern: "^[A-Z]{3}$", description: "ISO 4217 code in capitals, e.g. EUR" },
          reason: { type: "string", maxLength: 500, description: "Free text for the customer's record" },
        },
        required: ["order_id", "amount", "currency"],
      },
      identity: { order_id: "upper", amount: "decimal:2" },
      // idempotencyHeader defaults to Idempotency-Key; the payment service dedupes on it for 24 h.
      timeoutMs: 1500,
      keyRetentionMs: 24 * 3600_000,
      // The payment service keeps declined requests too: an item found is the effect only in state
      // "succeeded" (a "failed" one did nothing; a "pending" one is under way: rule 5a).
      keyProbe: { url: `${payments}/effects?clientRef={key}`, found: { type: "non_empty_array" }, state: paymentState },
      identityProbe: {
        url: `${payments}/effects/search?order_id={order_id}&amount={amount}&since={since}`,
        found: { type: "non_empty_array" },
        state: paymentState,
      },
      compensation: { tool: "reverse_refund", args: { refund_id: "{result.id}", order_id: "{args.order_id}" } },
      loggableFields: ["currency"],
      describe: "refund of {amount} {currency} on order {order_id}",
    },
    {
      name: "reverse_refund",
      description: "Reverse a refund (the compensation of issue_refund).",
      kind: "idempotent_by_key",
      method: "POST",
      url: `${payments}/effects`,
      args: [
        { name: "refund_id", type: "string", description: "The refund to reverse" },
        { name: "order_id", type: "string", required: false },
      ],
      identity: { refund_id: "exact" },
      timeoutMs: 1500,
      keyProbe: { url: `${payments}/effects?clientRef={key}`, found: { type: "non_empty_array" }, state: paymentState },
    },
  ];

  return { tools: [sendEmail], httpTools };
});
