/**
 * Rows of the notification tables (migration `20261202135402_notifications`) as the ports' shapes,
 * and the ids the database side makes. Times are epoch ms.
 */
import { randomBytes } from "node:crypto";
import type {
  NotificationChannel,
  NotificationChannelKind,
  NotificationDelivery,
  NotificationDeliveryStatus,
  NotificationEvent,
  NotificationEventKind,
} from "./ports.ts";

/** A `notification_channels` row as `pg` returns it. */
export interface ChannelRow {
  tenant: string;
  id: string;
  kind: NotificationChannelKind;
  name: string;
  url: string | null;
  to: string[] | null;
  events: NotificationEventKind[] | null;
  enabled: boolean;
  secret: string | null;
  created_at: Date;
}

/** A `notification_events` row. */
export interface EventRow {
  tenant: string;
  id: string;
  kind: NotificationEventKind;
  subject: Record<string, unknown>;
  occurred_at: Date;
}

/** A `notification_deliveries` row. */
export interface DeliveryRow {
  tenant: string;
  id: string;
  channel_id: string;
  kind: NotificationEventKind;
  event_ids: string[] | null;
  status: NotificationDeliveryStatus;
  attempts: number;
  next_attempt_at: Date | null;
  lease_until: Date | null;
  last_error: string | null;
  delivered_at: Date | null;
  created_at: Date;
}

/** The columns of {@link ChannelRow}, for `SELECT`/`RETURNING` (`events::text[]`: `pg` parses no array of an enum). */
export const CHANNEL_COLUMNS = `tenant, id, kind, name, url, "to", events::text[] AS events, enabled, secret, created_at`;
/** The columns of {@link EventRow}. */
export const EVENT_COLUMNS = "tenant, id, kind, subject, occurred_at";
/** The columns of {@link DeliveryRow}. */
export const DELIVERY_COLUMNS = `tenant, id, channel_id, kind, event_ids, status, attempts, next_attempt_at,
  lease_until, last_error, delivered_at, created_at`;

/** How many characters of a webhook secret a list shows: `whsec_` and 4 more. */
const SECRET_PREFIX_LENGTH = 10;

/** A channel as listed: never its secret, only its first characters. */
export function toChannel(row: ChannelRow): NotificationChannel {
  return {
    id: row.id,
    tenant: row.tenant,
    kind: row.kind,
    name: row.name,
    url: row.url,
    to: row.kind === "email" ? (row.to ?? []) : null,
    events: row.events ?? [],
    enabled: row.enabled,
    secretPrefix: row.secret === null ? null : row.secret.slice(0, SECRET_PREFIX_LENGTH),
    createdAtEpochMs: row.created_at.getTime(),
  };
}

/** An outbox event. */
export function toEvent(row: EventRow): NotificationEvent {
  return {
    id: row.id,
    tenant: row.tenant,
    kind: row.kind,
    occurredAtEpochMs: row.occurred_at.getTime(),
    subject: row.subject,
  };
}

/** A delivery of the log. */
export function toDelivery(row: DeliveryRow): NotificationDelivery {
  return {
    id: row.id,
    tenant: row.tenant,
    channelId: row.channel_id,
    kind: row.kind,
    eventIds: row.event_ids ?? [],
    status: row.status,
    attempts: row.attempts,
    nextAttemptAtEpochMs: row.status === "pending" ? (row.next_attempt_at?.getTime() ?? null) : null,
    lastError: row.last_error,
    deliveredAtEpochMs: row.delivered_at?.getTime() ?? null,
    createdAtEpochMs: row.created_at.getTime(),
  };
}

/** A new id: `prefix` + 24 random hex characters (96 bits), e.g. `nch_3f…`. */
export function newId(prefix: "nch_" | "ndl_" | "nev_"): string {
  return prefix + randomBytes(12).toString("hex");
}

/** A webhook's signing secret: `whsec_` + 32 random bytes, base64url (shown once, kept to sign). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64url")}`;
}
