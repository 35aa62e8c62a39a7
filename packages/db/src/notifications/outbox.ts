/**
 * {@link NotificationOutbox} on PostgreSQL: the delivery loop's side, across tenants. Deliveries are
 * taken under a lease in the database's clock (`FOR UPDATE SKIP LOCKED`: replicas take different
 * ones; a taken delivery whose lease passed may be taken again — delivery is at least once, and the
 * delivery id is the receiver's deduplication key).
 */
import type pg from "pg";
import { raiseConditions } from "./conditions.ts";
import { fanOut } from "./fan-out.ts";
import type { ClaimedDelivery, NotificationChannelKind, NotificationEvent, NotificationOutbox } from "./ports.ts";
import { type ChannelRow, DELIVERY_COLUMNS, type DeliveryRow, toChannel, toDelivery } from "./rows.ts";

/** Longest `lastError` kept, characters. */
const MAX_ERROR_LENGTH = 2000;

/**
 * Takes due deliveries: pending, due (`next_attempt_at <= now()`), not under a live lease, of an
 * enabled channel (a `test` delivery: any channel), oldest due first; counts the attempt and sets the
 * lease. Returns each with its channel (with the secret) and events, oldest first.
 */
const CLAIM_SQL = `
  WITH due AS (
    SELECT d.tenant, d.id FROM notification_deliveries d
    JOIN notification_channels c ON c.tenant = d.tenant AND c.id = d.channel_id
    WHERE d.status = 'pending' AND d.next_attempt_at <= now() AND (d.lease_until IS NULL OR d.lease_until <= now())
      AND (c.enabled OR d.kind = 'test')
    ORDER BY d.next_attempt_at, d.id LIMIT $1
    FOR UPDATE OF d SKIP LOCKED),
  taken AS (
    UPDATE notification_deliveries d SET attempts = d.attempts + 1,
      lease_until = now() + $2::float8 * interval '1 millisecond'
    FROM due WHERE d.tenant = due.tenant AND d.id = due.id
    RETURNING ${DELIVERY_COLUMNS.replace(/\b(tenant|id|kind|attempts|lease_until|created_at)\b/g, "d.$1")})
  SELECT taken.*, (extract(epoch FROM taken.lease_until) * 1000)::float8 AS lease_ms,
    row_to_json(c) AS channel,
    (SELECT coalesce(jsonb_agg(jsonb_build_object('id', e.id, 'tenant', e.tenant, 'kind', e.kind,
        'subject', e.subject, 'occurredAtEpochMs', (extract(epoch FROM e.occurred_at) * 1000)::float8)
        ORDER BY e.occurred_at, e.id), '[]'::jsonb)
      FROM notification_events e WHERE e.tenant = taken.tenant AND e.id = ANY(taken.event_ids)) AS events
  FROM taken JOIN notification_channels c ON c.tenant = taken.tenant AND c.id = taken.channel_id
  ORDER BY taken.next_attempt_at, taken.id`;

/** A row of {@link CLAIM_SQL}. */
interface ClaimRow extends DeliveryRow {
  lease_ms: number;
  channel: Omit<ChannelRow, "created_at"> & { created_at: string };
  events: NotificationEvent[];
}

/**
 * Records an attempt's result, for a pending delivery only (a repeat, or a result for a delivery
 * closed meanwhile, changes nothing), and — fenced by `$5`, the attempt the worker claimed — only while
 * no later claim counted a further attempt (a stale worker's late result changes nothing). Found through the pending deliveries' partial index: the id
 * alone does not name the tenant.
 */
const COMPLETE_SQL = `
  UPDATE notification_deliveries SET
    status = CASE WHEN $2 THEN 'delivered' WHEN $4::float8 IS NULL THEN 'failed' ELSE 'pending' END::"NotificationDeliveryStatus",
    delivered_at = CASE WHEN $2 THEN now() END,
    next_attempt_at = CASE WHEN NOT $2 AND $4::float8 IS NOT NULL THEN to_timestamp($4::float8 / 1000) END,
    lease_until = NULL,
    last_error = CASE WHEN $2 THEN NULL ELSE $3 END
  WHERE status = 'pending' AND id = $1 AND ($5::int IS NULL OR attempts = $5::int)`;

/**
 * Deletes closed deliveries and fanned-out events past the cut (a background step: it scans the
 * tables without an index on age alone, so call it rarely). An event a pending delivery carries stays.
 */
const PURGE_SQL = `
  WITH cut AS (SELECT now() - $1::float8 * interval '1 millisecond' AS at),
  d AS (
    DELETE FROM notification_deliveries WHERE (tenant, id) IN (
      SELECT tenant, id FROM notification_deliveries, cut
      WHERE status <> 'pending' AND created_at < cut.at LIMIT $2)
    RETURNING 1),
  e AS (
    DELETE FROM notification_events WHERE (tenant, id) IN (
      SELECT e.tenant, e.id FROM notification_events e, cut
      WHERE e.fanned_out AND e.occurred_at < cut.at
        AND NOT EXISTS (SELECT 1 FROM notification_deliveries p
          WHERE p.status = 'pending' AND p.tenant = e.tenant AND e.id = ANY(p.event_ids))
      LIMIT $2)
    RETURNING 1)
  SELECT (SELECT count(*) FROM d)::int AS deliveries, (SELECT count(*) FROM e)::int AS events`;

/** The outbox over a `pg` pool (the store's). */
export class PgNotificationOutbox implements NotificationOutbox {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  /**
   * Fans out new events (one transaction, one replica at a time), then takes due deliveries.
   * @throws RangeError when `limit` is not 1–1000, `leaseMs` not a positive number of ms or
   *   `groupWindowMs` negative.
   */
  async claimDue(options: { limit: number; leaseMs: number; groupWindowMs: number }): Promise<ClaimedDelivery[]> {
    const { limit, leaseMs, groupWindowMs } = options;
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
      throw new RangeError("limit: must be an integer from 1 to 1000");
    if (!Number.isFinite(leaseMs) || leaseMs <= 0) throw new RangeError("leaseMs: must be a positive number of ms");
    if (!Number.isFinite(groupWindowMs) || groupWindowMs < 0) {
      throw new RangeError("groupWindowMs: must be a number of ms, 0 or more");
    }
    const client = await this.#pool.connect();
    try {
      await fanOut(client, groupWindowMs);
    } finally {
      client.release();
    }
    const { rows } = await this.#pool.query<ClaimRow>(CLAIM_SQL, [limit, leaseMs]);
    return rows.map((row) => {
      const { secret, ...channel } = row.channel;
      return {
        delivery: toDelivery(row),
        channel: toChannel({ ...channel, secret, created_at: new Date(channel.created_at) }),
        secret: channel.kind === "webhook" ? secret : null,
        events: row.events,
        leaseUntilEpochMs: row.lease_ms,
      };
    });
  }

  /**
   * @throws RangeError when `retryAtEpochMs` is not a finite number or null, or `fence.attempt` not a
   *   positive integer.
   */
  async complete(
    deliveryId: string,
    result: { delivered: true } | { delivered: false; error: string; retryAtEpochMs: number | null },
    fence?: { attempt: number },
  ): Promise<boolean> {
    if (!result.delivered && result.retryAtEpochMs !== null && !Number.isFinite(result.retryAtEpochMs)) {
      throw new RangeError("retryAtEpochMs: must be epoch ms or null");
    }
    if (fence && (!Number.isSafeInteger(fence.attempt) || fence.attempt < 1)) {
      throw new RangeError("fence.attempt: must be the claimed delivery's attempts, a positive integer");
    }
    const error = result.delivered ? null : String(result.error).slice(0, MAX_ERROR_LENGTH);
    const retryAt = result.delivered ? null : result.retryAtEpochMs;
    const { rowCount } = await this.#pool.query(COMPLETE_SQL, [
      deliveryId,
      result.delivered,
      error,
      retryAt,
      fence?.attempt ?? null,
    ]);
    return (rowCount ?? 0) > 0;
  }

  async channelTarget(tenant: string, channelId: string) {
    const { rows } = await this.#pool.query<{
      kind: NotificationChannelKind;
      url: string | null;
      secret: string | null;
      to: string[] | null;
      enabled: boolean;
    }>(`SELECT kind, url, secret, "to", enabled FROM notification_channels WHERE tenant = $1 AND id = $2`, [
      tenant,
      channelId,
    ]);
    const row = rows[0];
    if (!row) return null;
    return {
      kind: row.kind,
      url: row.url,
      secret: row.kind === "webhook" ? row.secret : null,
      to: row.kind === "email" ? (row.to ?? []) : null,
      enabled: row.enabled,
    };
  }

  /** @throws RangeError when `olderThanMs` is not positive or `limit` not 1–100 000. */
  async purge(options: { olderThanMs: number; limit?: number }): Promise<{ deliveries: number; events: number }> {
    const { olderThanMs, limit = 10_000 } = options;
    if (!Number.isFinite(olderThanMs) || olderThanMs <= 0)
      throw new RangeError("olderThanMs: must be a positive number of ms");
    if (!Number.isInteger(limit) || limit < 1 || limit > 100_000)
      throw new RangeError("limit: must be an integer from 1 to 100000");
    const { rows } = await this.#pool.query<{ deliveries: number; events: number }>(PURGE_SQL, [olderThanMs, limit]);
    return rows[0] ?? { deliveries: 0, events: 0 };
  }

  raiseConditions(options: { unknownShareThreshold: number; minCalls: number; windowMs: number }) {
    return raiseConditions(this.#pool, options);
  }
}
