/**
 * The notifications page's pure helpers (issue 23 §3): the channel and delivery shapes as the executor
 * answers them (`notifications.*`, admin keys only), how a channel's target and a delivery's status are
 * shown, and which form field an API refusal names.
 */
import type { RouterInputs, RouterOutputs } from "~/trpc/types";
import type { StatusLook } from "./status";

/** A channel as `notifications.channels.list` answers it (never its secret). */
export type NotificationChannel = RouterOutputs["notifications"]["channels"]["list"]["channels"][number];
/** One delivery of the log (`notifications.deliveries.list`), newest first. */
export type NotificationDelivery = RouterOutputs["notifications"]["deliveries"]["list"]["items"][number];
/** Where a delivery stands: `pending`, `delivered`, `failed` (gave up). */
export type DeliveryStatus = NotificationDelivery["status"];
/** What `notifications.channels.create` takes. */
export type CreateChannelInput = RouterInputs["notifications"]["channels"]["create"];
/** webhook | slack | email. */
export type ChannelKind = CreateChannelInput["kind"];

/** The channel kinds, in the form's order. */
export const CHANNEL_KINDS: readonly ChannelKind[] = ["webhook", "slack", "email"];

/** The event kinds a channel may receive (the form's checkboxes; `test` goes to its channel anyway). */
export const EVENT_KINDS = [
  "human_queue",
  "compensation_failed",
  "evidence_contradicts",
  "unknown_share",
  "stale_pending",
] as const;

/** The delivery statuses, for the log's filter. */
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ["delivered", "pending", "failed"];

/** A channel kind in words. */
export function channelKindLabel(kind: ChannelKind): string {
  switch (kind) {
    case "webhook":
      return "Webhook (signed)";
    case "slack":
      return "Slack";
    case "email":
      return "E-mail";
  }
}

/** An event kind in words (`test`: a channel's "Send test"). */
export function eventKindLabel(kind: string): string {
  switch (kind) {
    case "human_queue":
      return "A record waits for a person";
    case "compensation_failed":
      return "A compensation failed";
    case "evidence_contradicts":
      return "Evidence contradicts a settled record";
    case "unknown_share":
      return "A tool's UNKNOWN share is high";
    case "stale_pending":
      return "Stale PENDING records";
    case "test":
      return "Test";
    default:
      return kind;
  }
}

/**
 * Where a channel sends to, short: a URL's host (a Slack or webhook URL's path may hold its secret,
 * so only the host is shown in the list), or the e-mail recipients joined by commas.
 */
export function channelTarget(channel: Pick<NotificationChannel, "url" | "to">): string {
  return channelTargetParts(channel).join(", ");
}

/**
 * `channelTarget` as its parts, each shown unbroken (the table wraps between them, never inside a host
 * or an address): a URL's host, or each e-mail recipient; `["–"]` when the channel has neither.
 */
export function channelTargetParts(channel: Pick<NotificationChannel, "url" | "to">): string[] {
  if (channel.url) {
    try {
      return [new URL(channel.url).host];
    } catch {
      return [channel.url];
    }
  }
  return channel.to?.length ? [...channel.to] : ["–"];
}

/**
 * The e-mail recipients typed in the form (commas, semicolons, spaces or new lines between them),
 * trimmed, empty parts dropped. The executor checks each address.
 */
export function parseRecipients(text: string): string[] {
  return text
    .split(/[\s,;]+/)
    .map((part) => part.trim())
    .filter((part) => part !== "");
}

/** The look of a delivery's status: never colour alone (an icon and words). */
export function deliveryStatusLook(delivery: Pick<NotificationDelivery, "status" | "attempts">): StatusLook {
  switch (delivery.status) {
    case "delivered":
      return { icon: "✓", label: "Delivered", tone: "ok" };
    case "pending":
      // A pending delivery that failed before is retrying: worth a look, not yet a failure.
      return delivery.attempts > 0
        ? { icon: "↻", label: "Pending, retrying", tone: "warn" }
        : { icon: "…", label: "Pending", tone: "muted" };
    case "failed":
      return { icon: "✕", label: "Failed (gave up)", tone: "bad" };
  }
}

/** The fields of the create form an API refusal can name (`data.field`, its first segment). */
export type FormField = "kind" | "name" | "url" | "to" | "events";
const FORM_FIELDS: readonly FormField[] = ["kind", "name", "url", "to", "events"];

/**
 * The form field an API error names (`data.field` of the executor's answer: `to.1` → `to`), or null
 * when it names none of them (shown above the form's buttons instead).
 */
export function formFieldOf(error: unknown): FormField | null {
  if (error === null || typeof error !== "object") return null;
  const field = (error as { data?: { field?: unknown } | null }).data?.field;
  if (typeof field !== "string") return null;
  const head = field.split(".")[0] as FormField;
  return FORM_FIELDS.includes(head) ? head : null;
}

/** Most distinct last errors `failedDeliveriesSummary` quotes. */
const QUOTED_ERRORS = 3;

/**
 * The delivery log's line about its failed deliveries (null when none is failed): how many, that no
 * more attempts are made (the executor gave up on them), and why, in the deliveries' own words: their
 * recorded last errors (`lastError`, e.g. "the channel was deleted before delivery" or an HTTP status),
 * the commonest first with how many share it, at most three — never a cause the log does not record.
 * E.g. `2 failed deliveries on this page (marked ✕): gave up, no more attempts. Last error: “the channel
 * was deleted before delivery” (2).`
 */
export function failedDeliveriesSummary(
  deliveries: readonly Pick<NotificationDelivery, "status" | "lastError">[],
): string | null {
  const failed = deliveries.filter((d) => d.status === "failed");
  if (failed.length === 0) return null;
  const byError = new Map<string, number>();
  for (const d of failed) {
    const error = d.lastError?.trim() || "no error recorded";
    byError.set(error, (byError.get(error) ?? 0) + 1);
  }
  const ranked = [...byError].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  const quoted = ranked.slice(0, QUOTED_ERRORS).map(([error, n]) => `“${error}” (${n})`);
  const others = ranked.length - quoted.length;
  const count = `${failed.length} failed deliver${failed.length === 1 ? "y" : "ies"} on this page (marked ✕)`;
  const why = `Last error${ranked.length === 1 ? "" : "s"}: ${quoted.join("; ")}${
    others > 0 ? `; ${others} other error${others === 1 ? "" : "s"}, each in its row` : ""
  }.`;
  return `${count}: gave up, no more attempts. ${why}`;
}
