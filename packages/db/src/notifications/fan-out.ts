/**
 * Fan-out with grouping (issue 23 §3: a burst of 500 records entering the queue in a minute becomes a
 * few notifications, not 500). For each (channel, kind), in the database's clock:
 * - when the last delivery's slot (`scheduled_at`) is older than the group window (or there is none),
 *   the first new event goes out at once, in a delivery of its own; the rest join a group whose slot is
 *   one window later;
 * - when the last slot is within the window and that delivery is a group still open (not yet due,
 *   never taken), the new events join it;
 * - otherwise they open a group whose slot is the last slot plus the window.
 * So a steady stream gives at most one delivery per window per channel and kind (a group holds at most
 * {@link MAX_GROUP_EVENTS} events; a bigger burst makes more groups for the same slot), and a single
 * event after a quiet window is sent at once. One replica fans out at a time (a transaction-level advisory
 * lock; the others skip the step), so two replicas never open two groups for one slot.
 */
import type pg from "pg";
import { newId } from "./rows.ts";

/** The advisory lock key of the fan-out step (any constant; two of Tristate's steps never share one). */
const FAN_OUT_LOCK_KEY = 2_302_301;

/** Most events one grouped delivery carries (a bigger burst makes more groups for the same slot). */
export const MAX_GROUP_EVENTS = 1000;

/** Most events fanned out per step (the rest wait for the next). */
const FAN_OUT_BATCH = 2000;

interface PendingEvent {
  tenant: string;
  id: string;
  kind: string;
}

interface ChannelOfTenant {
  tenant: string;
  id: string;
  events: string[] | null;
}

/** The last delivery of a (channel, kind): its slot, and whether events may still join it. */
interface LastSlot {
  id: string;
  scheduled_ms: number;
  open: boolean;
  size: number;
  now_ms: number;
}

/**
 * Fans the events not yet fanned out to the enabled channels that receive their kind, in one
 * transaction on `client` (a connection of its own, not in a transaction). `groupWindowMs` > 0.
 * @returns how many events were fanned out (0 when another replica holds the step).
 */
export async function fanOut(client: pg.PoolClient, groupWindowMs: number): Promise<number> {
  await client.query("BEGIN");
  try {
    const { rows: lock } = await client.query<{ ok: boolean }>("SELECT pg_try_advisory_xact_lock($1) AS ok", [
      FAN_OUT_LOCK_KEY,
    ]);
    if (lock[0]?.ok !== true) {
      await client.query("ROLLBACK");
      return 0;
    }
    const { rows: events } = await client.query<PendingEvent>(
      `SELECT tenant, id, kind FROM notification_events WHERE NOT fanned_out
       ORDER BY occurred_at, id LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [FAN_OUT_BATCH],
    );
    if (events.length === 0) {
      await client.query("COMMIT");
      return 0;
    }
    const tenants = [...new Set(events.map((e) => e.tenant))];
    const { rows: channels } = await client.query<ChannelOfTenant>(
      "SELECT tenant, id, events::text[] AS events FROM notification_channels WHERE tenant = ANY($1::text[]) AND enabled",
      [tenants],
    );
    // (tenant, channel, kind) -> its new events' ids, oldest first (the events are in that order).
    const groups = new Map<string, { tenant: string; channelId: string; kind: string; ids: string[] }>();
    for (const event of events) {
      for (const channel of channels) {
        if (channel.tenant !== event.tenant || !(channel.events ?? []).includes(event.kind)) continue;
        const at = `${event.tenant}\u0000${channel.id}\u0000${event.kind}`;
        let group = groups.get(at);
        if (!group) {
          group = { tenant: event.tenant, channelId: channel.id, kind: event.kind, ids: [] };
          groups.set(at, group);
        }
        group.ids.push(event.id);
      }
    }
    for (const group of groups.values()) await place(client, group, groupWindowMs);
    await client.query(
      `UPDATE notification_events e SET fanned_out = true FROM unnest($1::text[], $2::text[]) AS x(tenant, id)
       WHERE e.tenant = x.tenant AND e.id = x.id`,
      [events.map((e) => e.tenant), events.map((e) => e.id)],
    );
    await client.query("COMMIT");
    return events.length;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}

/** Writes one (channel, kind)'s new events into deliveries by the rules of this file's header. */
async function place(
  client: pg.PoolClient,
  group: { tenant: string; channelId: string; kind: string; ids: string[] },
  windowMs: number,
): Promise<void> {
  const { tenant, channelId, kind } = group;
  const { rows } = await client.query<LastSlot>(
    `SELECT id, (extract(epoch FROM scheduled_at) * 1000)::float8 AS scheduled_ms,
       (status = 'pending' AND attempts = 0 AND lease_until IS NULL AND scheduled_at > created_at
         AND scheduled_at > now()) AS open, cardinality(event_ids) AS size,
       (extract(epoch FROM now()) * 1000)::float8 AS now_ms
     FROM notification_deliveries WHERE tenant = $1 AND channel_id = $2 AND kind = $3::text::"NotificationEventKind"
     ORDER BY scheduled_at DESC, created_at DESC, id DESC LIMIT 1 FOR UPDATE`,
    [tenant, channelId, kind],
  );
  const last = rows[0];
  let ids = group.ids;
  if (last?.open && last.size < MAX_GROUP_EVENTS) {
    const joining = ids.slice(0, MAX_GROUP_EVENTS - last.size);
    await client.query(
      "UPDATE notification_deliveries SET event_ids = event_ids || $3::text[] WHERE tenant = $1 AND id = $2",
      [tenant, last.id, joining],
    );
    ids = ids.slice(joining.length);
  }
  if (ids.length === 0) return;
  const nowMs =
    last?.now_ms ??
    (await client.query<{ ms: number }>("SELECT (extract(epoch FROM now()) * 1000)::float8 AS ms")).rows[0]!.ms;
  let slotMs: number;
  if (last?.open) {
    slotMs = last.scheduled_ms; // the open group is full: another group for the same slot
  } else if (last && last.scheduled_ms > nowMs - windowMs) {
    slotMs = last.scheduled_ms + windowMs;
  } else {
    await insertDelivery(client, { tenant, channelId, kind, ids: ids.slice(0, 1), slotMs: null });
    ids = ids.slice(1);
    slotMs = nowMs + windowMs;
  }
  for (let at = 0; at < ids.length; at += MAX_GROUP_EVENTS) {
    await insertDelivery(client, { tenant, channelId, kind, ids: ids.slice(at, at + MAX_GROUP_EVENTS), slotMs });
  }
}

/** A new pending delivery due at `slotMs` (epoch ms), or now (null). */
async function insertDelivery(
  client: pg.PoolClient,
  d: { tenant: string; channelId: string; kind: string; ids: string[]; slotMs: number | null },
): Promise<void> {
  await client.query(
    `INSERT INTO notification_deliveries (tenant, id, channel_id, kind, event_ids, scheduled_at, next_attempt_at, created_at)
     SELECT $1, $2, $3, $4::text::"NotificationEventKind", $5::text[], slot, slot, now()
     FROM (SELECT coalesce(to_timestamp($6::float8 / 1000), now()) AS slot) s`,
    [d.tenant, newId("ndl_"), d.channelId, d.kind, d.ids, d.slotMs],
  );
}
