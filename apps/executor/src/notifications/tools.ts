/**
 * Tristate's own notifications are side effects, so they run through Tristate's own executor under
 * the product's rules (issue 23 §3): an intent record per delivery (run `notify:<channelId>`, step =
 * the delivery id), classified outcomes, reconciliation by the sweeper, the human queue when nothing
 * can decide. These internal tools are run by `executor.callInternal` only: they are not in the
 * catalog (`tools.list`, MCP `tools/list`), `calls.execute` and MCP `tools/call` refuse them as
 * unknown tools, and a user catalog may not declare a name with the {@link INTERNAL_TOOL_PREFIX}.
 */

import type { AnyTool } from "@tristate/core";
import { canon, defineTool, NotSentError } from "@tristate/core";
import { z } from "zod";
import { sendEmail } from "./email.ts";
import { NOTIFY_TOOLS } from "./internal-names.ts";
import type { SendingChannels } from "./sending-channels.ts";
import { postSlack } from "./slack.ts";
import { postWebhook } from "./webhook.ts";

/** Per-send timeout of a notification, ms. */
export const NOTIFY_TIMEOUT_MS = 10_000;

/** What the internal tools need: the channels claimed, and the SMTP settings. */
export interface NotifyToolsDeps {
  channels: SendingChannels;
  /** `TRISTATE_SMTP_URL`; undefined: e-mail channels fail (not sent). */
  smtpUrl: string | undefined;
  /** `TRISTATE_SMTP_FROM`. */
  smtpFrom: string;
}

const ids = { channel_id: z.string().min(1).max(120), delivery_id: z.string().min(1).max(120) };
const identity = { channel_id: canon.exact, delivery_id: canon.exact };
const loggableFields = ["channel_id", "delivery_id"];

/** The channel's URL, or not sent (nothing can have been sent without it). */
function urlOf(deps: NotifyToolsDeps, channelId: string): { url: string; secret: string | null } {
  const channel = deps.channels.get(channelId);
  if (!channel?.url) {
    throw new NotSentError(
      `notification channel ${channelId} is not loaded on this replica; the delivery loop that claims its delivery sends it`,
      { code: "NOT_SENT" },
    );
  }
  return { url: channel.url, secret: channel.secret };
}

/**
 * The three internal tools:
 * - `tristate.notify.webhook` — `idempotent_by_key`: the receiver deduplicates by `Idempotency-Key`
 *   (the delivery id), so an UNKNOWN (a timeout, a 5xx) is resent with the same key;
 * - `tristate.notify.slack` — `unsafe`: Slack incoming webhooks take no idempotency key and cannot be
 *   probed, so an ambiguous post is never resent blindly: it goes to the human queue (a person checks
 *   the Slack channel), and a definite failure (connection refused, 4xx) is retried;
 * - `tristate.notify.email` — `unsafe`: an SMTP server may not deduplicate by Message-ID (derived from
 *   the delivery id, so a recipient's client can); a failure after the message data was sent and
 *   before the server's final 250 is UNKNOWN, never resent blindly.
 */
export function notifyTools(deps: NotifyToolsDeps): AnyTool[] {
  return [
    defineTool({
      name: NOTIFY_TOOLS.webhook,
      kind: "idempotent_by_key",
      description: "Tristate notification: POSTs a signed JSON body to a tenant's webhook channel.",
      args: z.object({ ...ids, body: z.string().min(2) }).strict(),
      identity,
      loggableFields,
      timeoutMs: NOTIFY_TIMEOUT_MS,
      describe: (a) => `notification ${a.delivery_id} to webhook channel ${a.channel_id}`,
      invoke: async (args, ctx) => {
        const { url, secret } = urlOf(deps, args.channel_id);
        if (!secret) throw new NotSentError(`webhook channel ${args.channel_id} has no signing secret`);
        return postWebhook({ url, secret, deliveryId: args.delivery_id, body: args.body }, ctx);
      },
    }),
    defineTool({
      name: NOTIFY_TOOLS.slack,
      kind: "unsafe",
      description: "Tristate notification: posts a message to a tenant's Slack incoming webhook.",
      args: z.object({ ...ids, text: z.string().min(1), blocks: z.array(z.record(z.string(), z.unknown())) }).strict(),
      identity,
      loggableFields,
      timeoutMs: NOTIFY_TIMEOUT_MS,
      describe: (a) => `notification ${a.delivery_id} to Slack channel ${a.channel_id}`,
      invoke: async (args, ctx) =>
        postSlack({ url: urlOf(deps, args.channel_id).url, message: { text: args.text, blocks: args.blocks } }, ctx),
    }),
    defineTool({
      name: NOTIFY_TOOLS.email,
      kind: "unsafe",
      description: "Tristate notification: sends an e-mail over SMTP to a tenant's e-mail channel.",
      args: z
        .object({ ...ids, to: z.array(z.string().min(3)).min(1).max(20), subject: z.string().min(1), text: z.string() })
        .strict(),
      identity,
      loggableFields,
      timeoutMs: NOTIFY_TIMEOUT_MS,
      describe: (a) => `notification ${a.delivery_id} by e-mail to ${a.to.length} recipient(s)`,
      invoke: async (args, ctx) =>
        sendEmail(
          { smtpUrl: deps.smtpUrl, from: deps.smtpFrom },
          { deliveryId: args.delivery_id, to: args.to, subject: args.subject, text: args.text },
          ctx,
        ),
    }),
  ];
}
