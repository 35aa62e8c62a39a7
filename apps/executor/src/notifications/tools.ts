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
import type { NotificationOutbox } from "@tristate/db";
import type { Dispatcher } from "undici";
import { z } from "zod";
import type { HostPolicy } from "../catalog/http-tool/host-policy.ts";
import { sendEmail } from "./email.ts";
import { NOTIFY_TOOLS } from "./internal-names.ts";
import { postSlack } from "./slack.ts";
import { postWebhook } from "./webhook.ts";

/** Per-send timeout of a notification, ms. */
export const NOTIFY_TIMEOUT_MS = 10_000;

/** What the internal tools need: where the channels' notifications go, and the SMTP settings. */
export interface NotifyToolsDeps {
  /** The tenant whose executor runs these tools (one set per tenant's executor). */
  tenant: string;
  /**
   * Reads a channel's URL and secret from the database at each send (`NotificationOutbox.channelTarget`):
   * the records' arguments never carry them, so any replica's sweeper — after a restart too — can
   * reconcile or resend a notification record with the same `Idempotency-Key`.
   */
  targets: Pick<NotificationOutbox, "channelTarget">;
  /** `TRISTATE_SMTP_URL`; undefined: e-mail channels fail (not sent). */
  smtpUrl: string | undefined;
  /** `TRISTATE_SMTP_FROM`. */
  smtpFrom: string;
  /**
   * Where webhook and Slack channels may point (`TRISTATE_NOTIFY_ALLOW_HOSTS`, notifications/allowed-hosts.ts):
   * each send is checked first and connects through its dispatcher (no DNS rebinding to an inside address).
   */
  hosts: HostPolicy;
}

const ids = { channel_id: z.string().min(1).max(120), delivery_id: z.string().min(1).max(120) };
const identity = { channel_id: canon.exact, delivery_id: canon.exact };
const loggableFields = ["channel_id", "delivery_id"];

/** The channel as stored now. @throws NotSentError when it was deleted (or is another tenant's). */
async function existing(deps: NotifyToolsDeps, channelId: string) {
  const target = await deps.targets.channelTarget(deps.tenant, channelId);
  if (!target) {
    throw new NotSentError(`notification channel ${channelId} was deleted: nothing is sent to it`, {
      code: "NOT_SENT",
    });
  }
  return target;
}

/**
 * The channel's URL and secret, read now. @throws NotSentError (nothing can have been sent without
 * them) when the channel was deleted or has no URL.
 */
async function targetOf(deps: NotifyToolsDeps, channelId: string): Promise<{ url: string; secret: string | null }> {
  const target = await existing(deps, channelId);
  if (!target.url) {
    throw new NotSentError(`notification channel ${channelId} has no URL`, { code: "NOT_SENT" });
  }
  return { url: target.url, secret: target.secret };
}

/**
 * The channel's host checked against `TRISTATE_NOTIFY_ALLOW_HOSTS` now, and the dispatcher to connect
 * with (undefined: undici's default). @throws NotSentError (nothing written to any socket) when the
 * host is not allowed, is or resolves to a non-public address only a wildcard allows, or does not resolve.
 */
async function allowedDispatcher(
  deps: NotifyToolsDeps,
  channelId: string,
  url: string,
  signal: AbortSignal | undefined,
): Promise<Dispatcher | undefined> {
  await deps.hosts.check(url, `notification channel ${channelId}: POST ${shownUrl(url)}`, signal);
  return deps.hosts.dispatcher(url);
}

/** A channel URL as shown in an error: its origin only (a Slack URL's path is its credential). */
function shownUrl(url: string): string {
  try {
    return `${new URL(url).origin}/…`;
  } catch {
    return "(the channel's URL)";
  }
}

/**
 * Runs a send to `url`, keeping the URL's path out of its error: the message is stored as the
 * notification record's error (read by viewers) and the delivery log's `lastError`, and a Slack
 * incoming-webhook URL is a credential. The error's class (how it is classified) is kept.
 */
async function withoutUrl<T>(url: string, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (err) {
    if (err instanceof Error && err.message.includes(url)) err.message = err.message.replaceAll(url, shownUrl(url));
    throw err;
  }
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
        const { url, secret } = await targetOf(deps, args.channel_id);
        if (!secret) throw new NotSentError(`webhook channel ${args.channel_id} has no signing secret`);
        return withoutUrl(url, async () => {
          const dispatcher = await allowedDispatcher(deps, args.channel_id, url, ctx.signal);
          return postWebhook({ url, secret, deliveryId: args.delivery_id, body: args.body, dispatcher }, ctx);
        });
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
      invoke: async (args, ctx) => {
        const { url } = await targetOf(deps, args.channel_id);
        return withoutUrl(url, async () => {
          const dispatcher = await allowedDispatcher(deps, args.channel_id, url, ctx.signal);
          return postSlack({ url, message: { text: args.text, blocks: args.blocks }, dispatcher }, ctx);
        });
      },
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
      invoke: async (args, ctx) => {
        await existing(deps, args.channel_id);
        return sendEmail(
          { smtpUrl: deps.smtpUrl, from: deps.smtpFrom },
          { deliveryId: args.delivery_id, to: args.to, subject: args.subject, text: args.text },
          ctx,
        );
      },
    }),
  ];
}
