/**
 * {@link TenantNotifications} on PostgreSQL: one tenant's channels and delivery log. Every statement
 * names the tenant, so another tenant's channel or delivery reads as absent (null, false, empty).
 */
import type pg from "pg";
import { checkChannelPatch, checkCreateChannel } from "./channel-input.ts";
import {
  NOTIFICATION_EVENT_KINDS,
  type NotificationChannel,
  type NotificationDeliveryPage,
  type NotificationDeliveryStatus,
  type NotificationEventKind,
  type TenantNotifications,
} from "./ports.ts";
import {
  CHANNEL_COLUMNS,
  type ChannelRow,
  DELIVERY_COLUMNS,
  type DeliveryRow,
  EVENT_COLUMNS,
  type EventRow,
  newId,
  newWebhookSecret,
  toChannel,
  toDelivery,
  toEvent,
} from "./rows.ts";

/** What a pending delivery of a deleted channel says in the log. */
export const CHANNEL_DELETED_ERROR = "the channel was deleted before delivery";

const DELIVERY_STATUSES: readonly NotificationDeliveryStatus[] = ["pending", "delivered", "failed"];

/** The delivery log's cursor: the last item's (created_at epoch ms, id) and the tenant, base64url JSON. */
function encodeCursor(tenant: string, createdAtEpochMs: number, id: string): string {
  return Buffer.from(JSON.stringify([createdAtEpochMs, id, tenant]), "utf8").toString("base64url");
}

/** @throws RangeError when `cursor` is not one {@link encodeCursor} made for `tenant`. */
function decodeCursor(tenant: string, cursor: string): { createdAt: Date; id: string } {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (
      Array.isArray(value) &&
      value.length === 3 &&
      Number.isSafeInteger(value[0]) &&
      value[0] >= 0 &&
      value[0] <= 8.64e15 &&
      typeof value[1] === "string" &&
      /^ndl_[0-9a-f]{1,64}$/.test(value[1]) &&
      value[2] === tenant
    ) {
      return { createdAt: new Date(value[0] as number), id: value[1] };
    }
  } catch {
    // fall through
  }
  throw new RangeError("cursor: is not a cursor returned by this list");
}

/** One tenant's notifications over a `pg` pool (every tenant's views share it). */
export class PgTenantNotifications implements TenantNotifications {
  readonly #pool: pg.Pool;
  readonly tenant: string;

  /** @param tenant - an already checked tenant name (`checkTenant`). */
  constructor(pool: pg.Pool, tenant: string) {
    this.#pool = pool;
    this.tenant = tenant;
  }

  async createChannel(input: Parameters<TenantNotifications["createChannel"]>[0]) {
    const checked = checkCreateChannel(input);
    const secret = checked.kind === "webhook" ? newWebhookSecret() : null;
    const { rows } = await this.#pool.query<ChannelRow>(
      `INSERT INTO notification_channels (tenant, id, kind, name, url, "to", events, enabled, secret, created_at)
       VALUES ($1, $2, $3, $4, $5, $6::text[], $7::"NotificationEventKind"[], true, $8, now())
       RETURNING ${CHANNEL_COLUMNS}`,
      [this.tenant, newId("nch_"), checked.kind, checked.name, checked.url, checked.to, checked.events, secret],
    );
    return { channel: toChannel(rows[0]!), secret };
  }

  async listChannels(): Promise<NotificationChannel[]> {
    const { rows } = await this.#pool.query<ChannelRow>(
      `SELECT ${CHANNEL_COLUMNS} FROM notification_channels WHERE tenant = $1 ORDER BY created_at, id`,
      [this.tenant],
    );
    return rows.map(toChannel);
  }

  async getChannel(id: string): Promise<NotificationChannel | null> {
    if (typeof id !== "string") return null;
    const { rows } = await this.#pool.query<ChannelRow>(
      `SELECT ${CHANNEL_COLUMNS} FROM notification_channels WHERE tenant = $1 AND id = $2`,
      [this.tenant, id],
    );
    return rows[0] ? toChannel(rows[0]) : null;
  }

  async updateChannel(
    id: string,
    patch: { name?: string; events?: NotificationEventKind[]; enabled?: boolean },
  ): Promise<NotificationChannel | null> {
    const checked = checkChannelPatch(patch);
    if (typeof id !== "string") return null;
    const { rows } = await this.#pool.query<ChannelRow>(
      `UPDATE notification_channels SET name = coalesce($3, name),
         events = coalesce($4::"NotificationEventKind"[], events), enabled = coalesce($5, enabled)
       WHERE tenant = $1 AND id = $2 RETURNING ${CHANNEL_COLUMNS}`,
      [this.tenant, id, checked.name ?? null, checked.events ?? null, checked.enabled ?? null],
    );
    return rows[0] ? toChannel(rows[0]) : null;
  }

  async deleteChannel(id: string): Promise<boolean> {
    if (typeof id !== "string") return false;
    // One statement: the channel goes, its pending deliveries are closed as failed (the log is kept).
    const { rows } = await this.#pool.query<{ n: number }>(
      `WITH gone AS (DELETE FROM notification_channels WHERE tenant = $1 AND id = $2 RETURNING id),
         dropped AS (UPDATE notification_deliveries SET status = 'failed', next_attempt_at = NULL,
             lease_until = NULL, last_error = $3
           WHERE tenant = $1 AND channel_id IN (SELECT id FROM gone) AND status = 'pending' RETURNING 1)
       SELECT (SELECT count(*) FROM gone)::int AS n, (SELECT count(*) FROM dropped)::int AS dropped`,
      [this.tenant, id, CHANNEL_DELETED_ERROR],
    );
    return (rows[0]?.n ?? 0) > 0;
  }

  async sendTest(channelId: string) {
    if (typeof channelId !== "string") return null;
    // One statement: the `test` event (already fanned out) and its one delivery, due now.
    const { rows } = await this.#pool.query<EventRow & { delivery_id: string }>(
      `WITH ch AS (SELECT id, name, kind FROM notification_channels WHERE tenant = $1 AND id = $2),
         ev AS (INSERT INTO notification_events (tenant, id, kind, subject, occurred_at, fanned_out)
           SELECT $1, $3, 'test', jsonb_build_object('channelId', ch.id, 'channelName', ch.name,
             'message', 'A test notification from Tristate: this channel works.'), now(), true FROM ch
           RETURNING ${EVENT_COLUMNS}),
         dl AS (INSERT INTO notification_deliveries (tenant, id, channel_id, kind, event_ids, scheduled_at,
             next_attempt_at, created_at)
           SELECT $1, $4, ch.id, 'test', ARRAY[ev.id], now(), now(), now() FROM ch, ev RETURNING id)
       SELECT ev.*, dl.id AS delivery_id FROM ev, dl`,
      [this.tenant, channelId, newId("nev_"), newId("ndl_")],
    );
    const row = rows[0];
    return row ? { event: toEvent(row), deliveryId: row.delivery_id } : null;
  }

  async listDeliveries(
    query: { channelId?: string; status?: NotificationDeliveryStatus; cursor?: string; limit?: number } = {},
  ): Promise<NotificationDeliveryPage> {
    const limit = query.limit ?? 50;
    if (!Number.isInteger(limit) || limit < 1 || limit > 200)
      throw new RangeError("limit: must be an integer from 1 to 200");
    if (query.status !== undefined && !DELIVERY_STATUSES.includes(query.status)) {
      throw new RangeError(`status: must be one of ${DELIVERY_STATUSES.join(", ")}`);
    }
    const after = query.cursor === undefined ? null : decodeCursor(this.tenant, query.cursor);
    const { rows } = await this.#pool.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM notification_deliveries
       WHERE tenant = $1 AND ($2::text IS NULL OR channel_id = $2)
         AND ($3::"NotificationDeliveryStatus" IS NULL OR status = $3)
         AND ($4::timestamptz IS NULL OR (created_at, id) < ($4, $5::text))
       ORDER BY created_at DESC, id DESC LIMIT $6`,
      [
        this.tenant,
        query.channelId ?? null,
        query.status ?? null,
        after?.createdAt ?? null,
        after?.id ?? null,
        limit + 1,
      ],
    );
    const items = rows.slice(0, limit).map(toDelivery);
    const last = items.at(-1);
    return {
      items,
      nextCursor: rows.length > limit && last ? encodeCursor(this.tenant, last.createdAtEpochMs, last.id) : null,
    };
  }

  async hasChannelFor(kind: NotificationEventKind): Promise<boolean> {
    if (!NOTIFICATION_EVENT_KINDS.includes(kind)) return false;
    const { rows } = await this.#pool.query<{ yes: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM notification_channels
         WHERE tenant = $1 AND enabled AND $2::text::"NotificationEventKind" = ANY(events)) AS yes`,
      [this.tenant, kind],
    );
    return rows[0]?.yes === true;
  }
}
