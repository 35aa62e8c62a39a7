/**
 * Condition events (issue 23 §3), edge-triggered through `notification_conditions`: an event when a
 * condition starts, none while it lasts; when it ends its row is cleared, so a later start raises a
 * new event. Conditions:
 * - `stale_pending`: a tenant has PENDING records past their lease (the dashboard's stale list and
 *   `stats.attention`: `status = 'PENDING' AND recheck_at < now AND lease_until_at < now`), in the
 *   database's clock;
 * - `unknown_share:<tool>`: a tool's share of calls that were ever UNKNOWN, over the minute rollups of
 *   the last `windowMs` (cheap; the rollups lag the log by their refresh margin), is over the threshold
 *   with at least `minCalls` calls. Tristate's own `tristate.notify.*` tools are left out.
 * Two replicas checking at once raise one event: the start is an upsert that only a row not active
 * takes (`ON CONFLICT … WHERE NOT active`).
 */
import type pg from "pg";
import type { NotificationEvent } from "./ports.ts";

/** The conditions that hold now, one row per (tenant, condition), with the event's kind and subject. */
const CURRENT_SQL = `
  SELECT tenant, 'stale_pending' AS condition, 'stale_pending' AS kind,
    jsonb_build_object('count', count(*)::int,
      'oldestLeaseEndedAtEpochMs', (extract(epoch FROM min(lease_until_at)) * 1000)::float8) AS subject
  FROM intent_records
  WHERE status = 'PENDING' AND recheck_at < now() AND lease_until_at < now()
  GROUP BY tenant
  UNION ALL
  SELECT tenant, 'unknown_share:' || tool, 'unknown_share',
    jsonb_build_object('tool', tool, 'calls', sum(calls)::int, 'unknown', sum(unknown)::int,
      'share', sum(unknown)::float8 / sum(calls), 'threshold', $1::float8, 'windowMs', $3::float8)
  FROM intent_rollups
  WHERE bucket_ms = 60000 AND bucket_start >= now() - $3::float8 * interval '1 millisecond'
    AND tool NOT LIKE 'tristate.notify.%'
  GROUP BY tenant, tool
  HAVING sum(calls) >= $2::int AND sum(calls) > 0 AND sum(unknown)::float8 / sum(calls) > $1::float8`;

/** Starts the conditions not active, raising their events; clears the active ones that ended. */
const RAISE_SQL = `
  WITH cur AS (${CURRENT_SQL}),
  started AS (
    INSERT INTO notification_conditions AS n (tenant, condition, active, since, event_id, updated_at)
    SELECT tenant, condition, true, now(),
      'nev_' || md5(tenant || '/' || condition || '/' || (extract(epoch FROM now()) * 1000)::bigint), now()
    FROM cur
    ON CONFLICT (tenant, condition) DO UPDATE SET active = true, since = excluded.since,
      event_id = excluded.event_id, updated_at = excluded.updated_at
    WHERE NOT n.active
    RETURNING tenant, condition, event_id),
  raised AS (
    INSERT INTO notification_events (tenant, id, kind, subject, occurred_at)
    SELECT s.tenant, s.event_id, cur.kind::"NotificationEventKind", cur.subject, now()
    FROM started s JOIN cur ON cur.tenant = s.tenant AND cur.condition = s.condition
    ON CONFLICT DO NOTHING
    RETURNING tenant, id, kind, subject, (extract(epoch FROM occurred_at) * 1000)::float8 AS occurred_ms),
  ended AS (
    UPDATE notification_conditions n SET active = false, updated_at = now()
    WHERE n.active AND NOT EXISTS (SELECT 1 FROM cur WHERE cur.tenant = n.tenant AND cur.condition = n.condition)
    RETURNING 1)
  SELECT raised.*, (SELECT count(*) FROM ended)::int AS ended FROM raised ORDER BY tenant, id`;

/**
 * Raises the condition events that start now (see this file's header).
 * @returns the new events.
 * @throws RangeError when `unknownShareThreshold` is not in [0, 1], `minCalls` not a non-negative
 *   integer or `windowMs` not positive.
 */
export async function raiseConditions(
  pool: pg.Pool,
  options: { unknownShareThreshold: number; minCalls: number; windowMs: number },
): Promise<NotificationEvent[]> {
  const { unknownShareThreshold, minCalls, windowMs } = options;
  if (!(unknownShareThreshold >= 0 && unknownShareThreshold <= 1)) {
    throw new RangeError("unknownShareThreshold: must be a share from 0 to 1");
  }
  if (!Number.isSafeInteger(minCalls) || minCalls < 0) throw new RangeError("minCalls: must be an integer, 0 or more");
  if (!Number.isFinite(windowMs) || windowMs <= 0) throw new RangeError("windowMs: must be a positive number of ms");
  const { rows } = await pool.query<{
    tenant: string;
    id: string;
    kind: NotificationEvent["kind"];
    subject: Record<string, unknown>;
    occurred_ms: number;
  }>(RAISE_SQL, [unknownShareThreshold, minCalls, windowMs]);
  return rows.map((r) => ({
    id: r.id,
    tenant: r.tenant,
    kind: r.kind,
    subject: r.subject,
    occurredAtEpochMs: r.occurred_ms,
  }));
}
