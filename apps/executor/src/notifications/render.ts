/**
 * What a notification says (issue 23 §3): one delivery — one event, or a group of events of one kind
 * for one channel — rendered as the webhook's JSON body, a Slack message (`text` + `blocks`, Slack's
 * incoming-webhook format) and an e-mail. Rendered once per delivery from what the outbox stored, so
 * every attempt of a delivery sends the same bytes (the webhook's body is what its signature covers).
 */
import type { ClaimedDelivery, NotificationEvent, NotificationEventKind } from "@tristate/db";

/** Most events a Slack message or e-mail lists one by one; the rest are counted. */
export const LISTED_EVENTS = 20;

/** The webhook's JSON body (`Content-Type: application/json`). `id` is the delivery's, also sent as `Idempotency-Key`. */
export interface WebhookBody {
  /** The delivery id (`ndl_…`): drop a body whose id you have processed. */
  id: string;
  /** The event kind, the same for every event of a group. */
  type: NotificationEventKind;
  tenant: string;
  /** Events in this delivery (more than one: a burst grouped). */
  count: number;
  /** The events, oldest first, each with its own stable id and a dashboard link. */
  events: Array<NotificationEvent & { url: string }>;
}

const TITLES: Record<NotificationEventKind, string> = {
  human_queue: "waiting for a person in the human queue",
  compensation_failed: "a compensation failed",
  evidence_contradicts: "evidence contradicts a settled record or a person's decision",
  unknown_share: "a tool's UNKNOWN share crossed its threshold",
  stale_pending: "stale PENDING records appeared",
  test: "test notification",
};

/** A string field of a subject, by the first of its names present. */
function field(subject: Record<string, unknown>, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = subject[name];
    if (typeof value === "string" && value !== "") return value;
    if (typeof value === "number") return String(value);
  }
  return undefined;
}

/** The dashboard page an event is about: the record, else the list it belongs to. */
export function eventUrl(dashboardUrl: string, event: NotificationEvent): string {
  const base = dashboardUrl.replace(/\/+$/, "");
  const key = field(event.subject, "key", "idempotencyKey", "idempotency_key");
  if (key && event.kind !== "unknown_share" && event.kind !== "stale_pending") {
    return `${base}/intents/${encodeURIComponent(key)}`;
  }
  switch (event.kind) {
    case "human_queue":
      return `${base}/queue`;
    case "stale_pending":
      return `${base}/stale`;
    default:
      return `${base}/overview`;
  }
}

/** One line about one event: its tool, record and reason when the subject has them. */
export function eventLine(event: NotificationEvent): string {
  const s = event.subject;
  const tool = field(s, "tool");
  const key = field(s, "key", "idempotencyKey", "idempotency_key");
  const run = field(s, "runId", "run_id");
  const reason = field(s, "reason", "code", "reasonCode", "reason_code");
  const parts = [
    tool ? `tool ${tool}` : null,
    key ? `record ${key}` : null,
    run ? `run ${run}` : null,
    reason ? `(${reason})` : null,
  ];
  if (event.kind === "unknown_share") {
    const share = typeof s.share === "number" ? `${(s.share * 100).toFixed(1)}%` : field(s, "share");
    parts.push(share ? `UNKNOWN share ${share}` : null, field(s, "calls") ? `of ${field(s, "calls")} calls` : null);
  }
  if (event.kind === "stale_pending") parts.push(field(s, "count") ? `${field(s, "count")} records` : null);
  if (event.kind === "test") parts.push("sent by the channel's test action");
  const text = parts.filter((p): p is string => p !== null).join(" ");
  return text || event.id;
}

/** The headline of a delivery (ASCII: an e-mail subject stays readable): `[Tristate: acme] 3 events: waiting for a person…`. */
export function headline(claimed: ClaimedDelivery): string {
  const n = claimed.events.length;
  const what = TITLES[claimed.delivery.kind];
  return `[Tristate: ${claimed.delivery.tenant}] ${n > 1 ? `${n} events: ` : ""}${what}`;
}

/** What stands in for an error message withheld from a notification (see {@link withholdSecrets}). */
export const MESSAGE_WITHHELD =
  "(withheld: the tool declares secret fields and its error message may hold one; read it in the dashboard)";

/**
 * The event as sent: when its record's tool declares `secretFields`, the record's error `message`
 * (free text the tool wrote, which may echo an argument) is replaced by {@link MESSAGE_WITHHELD} — a
 * notification leaves the service, and the notification's own record (readable by viewers) keeps its
 * body. The reason `code` and the link stay.
 */
export function withholdSecrets(event: NotificationEvent, secretTools: ReadonlySet<string>): NotificationEvent {
  const tool = event.subject.tool;
  if (typeof tool !== "string" || !secretTools.has(tool) || event.subject.message == null) return event;
  return { ...event, subject: { ...event.subject, message: MESSAGE_WITHHELD } };
}

/**
 * The webhook's body as JSON text (the exact bytes signed and sent on every attempt).
 * @param secretTools - the catalog's tools that declare `secretFields` (their messages are withheld).
 */
export function webhookBody(
  claimed: ClaimedDelivery,
  dashboardUrl: string,
  secretTools: ReadonlySet<string> = new Set(),
): string {
  const body: WebhookBody = {
    id: claimed.delivery.id,
    type: claimed.delivery.kind,
    tenant: claimed.delivery.tenant,
    count: claimed.events.length,
    events: claimed.events.map((e) => ({ ...withholdSecrets(e, secretTools), url: eventUrl(dashboardUrl, e) })),
  };
  return JSON.stringify(body);
}

/** A Slack incoming-webhook message: `text` (the notification's fallback) and Block Kit `blocks`. */
export interface SlackMessage {
  text: string;
  blocks: Array<Record<string, unknown>>;
}

/** Slack's mrkdwn escapes `&`, `<`, `>`. */
function mrkdwn(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

/** The Slack message of a delivery: a header line, one linked line per event (up to {@link LISTED_EVENTS}). */
export function slackMessage(claimed: ClaimedDelivery, dashboardUrl: string): SlackMessage {
  const title = headline(claimed);
  const listed = claimed.events.slice(0, LISTED_EVENTS);
  const lines = listed.map((e) => `• <${eventUrl(dashboardUrl, e)}|${mrkdwn(eventLine(e))}>`);
  const more = claimed.events.length - listed.length;
  if (more > 0) lines.push(`…and ${more} more: <${eventUrl(dashboardUrl, claimed.events[0]!)}|open the dashboard>`);
  return {
    text: title,
    blocks: [
      { type: "section", text: { type: "mrkdwn", text: `*${mrkdwn(title)}*` } },
      { type: "section", text: { type: "mrkdwn", text: lines.join("\n").slice(0, 2900) } },
      { type: "context", elements: [{ type: "mrkdwn", text: `delivery ${claimed.delivery.id}` }] },
    ],
  };
}

/** The e-mail of a delivery: subject and plain text with a link per event. */
export function emailMessage(claimed: ClaimedDelivery, dashboardUrl: string): { subject: string; text: string } {
  const listed = claimed.events.slice(0, LISTED_EVENTS);
  const lines = listed.map((e) => `- ${eventLine(e)}\n  ${eventUrl(dashboardUrl, e)}`);
  const more = claimed.events.length - listed.length;
  if (more > 0) lines.push(`- …and ${more} more: ${dashboardUrl.replace(/\/+$/, "")}/queue`);
  const text = [
    headline(claimed),
    "",
    ...lines,
    "",
    `Delivery ${claimed.delivery.id} (events ${claimed.events
      .map((e) => e.id)
      .join(", ")
      .slice(0, 2000)}).`,
  ].join("\n");
  return { subject: headline(claimed), text };
}
