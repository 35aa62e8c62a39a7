import {
  type IntentEvent,
  type IntentPatch,
  isCompensationStep,
  type NewIntentRecord,
  storableJson,
} from "@tristate/core";
import { eventsParam, insertEventsSql, jsonParam, RECORD_COLUMNS, timeParam } from "./intent-row.ts";

/** A parameterised statement for `pg` (`name` makes `pg` prepare it once per connection). */
export interface Statement {
  name?: string;
  text: string;
  values: unknown[];
}

const CLAIM_TEXT = `WITH arc AS (
  SELECT ${RECORD_COLUMNS} FROM intent_records_archive
  WHERE tenant = $14 AND (key = $1 OR (run_id = $2 AND step_id = $3 AND tool = $4)) ORDER BY (key = $1) DESC LIMIT 1
), ins AS (
  INSERT INTO intent_records (tenant, key, run_id, step_id, tool, args, identity, status, attempt, lease_until_at,
    recheck_at, compensation, needs_human, reconcile_sweeps, version, created_at, updated_at, trace_id)
  SELECT $14::text, $1::text, $2::text, $3::text, $4::text, $5::jsonb, $6::jsonb, 'PENDING'::"IntentStatus", $7::int,
    $8::timestamptz, $8::timestamptz, $9::jsonb, false, 0, 1, LEAST($10::timestamptz, now()), $11::timestamptz, $12::text
  WHERE ($15::boolean OR NOT EXISTS (SELECT 1 FROM run_aborts WHERE tenant = $14 AND run_id = $2))
    AND NOT EXISTS (SELECT 1 FROM arc)
  ON CONFLICT DO NOTHING
  RETURNING ${RECORD_COLUMNS}
), ev AS (
  ${insertEventsSql("$13", "$14", "ins")}
)
SELECT true AS claimed, false AS archived, * FROM ins WHERE tristate_claim_unarchived($14, $1, $2, $3, $4)
UNION ALL
SELECT false AS claimed, false AS archived, ${RECORD_COLUMNS} FROM intent_records
WHERE tenant = $14 AND (key = $1 OR (run_id = $2 AND step_id = $3 AND tool = $4)) AND NOT EXISTS (SELECT 1 FROM ins)
UNION ALL
SELECT false AS claimed, true AS archived, * FROM arc`;

/**
 * The claim in one round trip: insert PENDING unless the key or (run, step, tool) exists (ON CONFLICT
 * without a target covers both unique constraints), with the events only when it inserted, and
 * otherwise the existing record. `created_at` is the earlier of the caller's time and the database's
 * (rule 9): an identity probe counts effects since it, so a replica whose clock runs ahead must not
 * move it past an effect. The record is due for the sweeper when its lease ends (`recheck_at` = the
 * lease). Nothing is inserted for a run that was aborted (rule 13; `run_aborts`), unless the step is a
 * compensation's (`$15`): zero rows then, and the store tells the refusal from a winner it cannot
 * see yet by a second look. A record the archive holds (same key, or same run, step and tool) is
 * found there and nothing is inserted (rule 15: a repeat of an archived step replays it, another
 * identity is a conflict); a claim that inserted while the archiver moved the same step out of sight
 * of its snapshot is undone by `tristate_claim_unarchived` (a fresh look after the insert: SQLSTATE
 * 40001, hint {@link ARCHIVE_RACE_HINT}; the store claims again). Rows: `claimed`, `archived` (the
 * row is the archive's) + {@link RECORD_COLUMNS}, the live table's first. Zero rows when the winner
 * committed after this statement's snapshot: read again with {@link existingSql}.
 */
export function claimSql(
  tenant: string,
  record: NewIntentRecord,
  events: IntentEvent[],
  nowEpochMs: number,
): Statement {
  return {
    name: "tristate_claim_v6",
    text: CLAIM_TEXT,
    values: [
      record.key,
      record.runId,
      record.stepId,
      record.tool,
      jsonParam(record.args),
      jsonParam(record.identity),
      record.attempt,
      timeParam(record.leaseUntilEpochMs, "leaseUntilEpochMs"),
      record.compensation == null ? null : jsonParam(record.compensation),
      timeParam(record.createdAtEpochMs, "createdAtEpochMs"),
      timeParam(nowEpochMs, "nowEpochMs"),
      record.traceId ?? null,
      eventsParam(events),
      tenant,
      isCompensationStep(record.stepId),
    ],
  };
}

/**
 * The `hint` of the error `tristate_claim_unarchived` raises (SQLSTATE 40001) when a claim inserted a
 * step the archiver had just moved: the statement rolled back, nothing was claimed; claim again.
 */
export const ARCHIVE_RACE_HINT = "tristate: claim raced the archive; claim again";

/**
 * The tenant's record with this key or this (run, step, tool), if any (a claim loser's second look):
 * the live table's, else the archive's (`archived`: true).
 */
export function existingSql(tenant: string, record: NewIntentRecord): Statement {
  const where =
    "WHERE tenant = $5 AND (key = $1 OR (run_id = $2 AND step_id = $3 AND tool = $4)) ORDER BY (key = $1) DESC LIMIT 1";
  return {
    name: "tristate_existing_v3",
    text: `(SELECT false AS archived, ${RECORD_COLUMNS} FROM intent_records ${where})
      UNION ALL (SELECT true AS archived, ${RECORD_COLUMNS} FROM intent_records_archive ${where}) LIMIT 1`,
    values: [record.key, record.runId, record.stepId, record.tool, tenant],
  };
}

/** One record of the tenant by key. */
export function getSql(tenant: string, key: string): Statement {
  return {
    name: "tristate_get_v2",
    text: `SELECT ${RECORD_COLUMNS} FROM intent_records WHERE tenant = $1 AND key = $2`,
    values: [tenant, key],
  };
}

/** The tenant's other records of a tool with the same canonical identity since a time (rule 5g); uses (tenant, tool, created_at). */
export function listByIdentitySql(
  tenant: string,
  tool: string,
  identity: Record<string, string>,
  sinceEpochMs: number,
  excludeKey: string,
): Statement {
  return {
    name: "tristate_list_by_identity_v2",
    text: `SELECT ${RECORD_COLUMNS} FROM intent_records
      WHERE tenant = $5 AND tool = $1 AND created_at >= $2 AND identity = $3::jsonb AND key <> $4 ORDER BY created_at, key`,
    values: [tool, timeParam(sinceEpochMs, "sinceEpochMs"), storableJson(identity), excludeKey, tenant],
  };
}

/** A run's records (of the tenant), oldest first. */
export function listByRunSql(tenant: string, runId: string): Statement {
  return {
    name: "tristate_list_by_run_v2",
    text: `SELECT ${RECORD_COLUMNS} FROM intent_records WHERE tenant = $1 AND run_id = $2 ORDER BY created_at, key`,
    values: [tenant, runId],
  };
}

/** A field of an outcome patch. */
export type PatchKey = keyof IntentPatch;

/** How each patch field is written: its column and SQL cast, and how its value becomes a parameter. */
export const PATCH_COLUMNS: Record<PatchKey, { column: string; cast: string; param: (v: never) => unknown }> = {
  status: { column: "status", cast: '::"IntentStatus"', param: (v: string) => v },
  attempt: { column: "attempt", cast: "::int", param: (v: number) => v },
  leaseUntilEpochMs: {
    column: "lease_until_at",
    cast: "::timestamptz",
    param: (v: number) => timeParam(v, "leaseUntilEpochMs"),
  },
  recheckAtEpochMs: {
    column: "recheck_at",
    cast: "::timestamptz",
    param: (v: number | null) => (v == null ? null : timeParam(v, "recheckAtEpochMs")),
  },
  // `result: undefined` clears the result (SQL NULL), as MemoryIntentStore does when the key is present.
  result: { column: "result", cast: "::jsonb", param: jsonParam },
  error: { column: "error", cast: "::jsonb", param: (v: object | null) => (v == null ? null : storableJson(v)) },
  compensation: {
    column: "compensation",
    cast: "::jsonb",
    param: (v: object | null) => (v == null ? null : storableJson(v)),
  },
  resolution: { column: "resolution", cast: '::"Resolution"', param: (v: string | null) => v },
  needsHuman: { column: "needs_human", cast: "::boolean", param: (v: boolean) => v },
  reconcileSweeps: { column: "reconcile_sweeps", cast: "::int", param: (v: number) => v },
  finishedAtEpochMs: {
    column: "finished_at",
    cast: "::timestamptz",
    param: (v: number | null) => (v == null ? null : timeParam(v, "finishedAtEpochMs")),
  },
  traceId: { column: "trace_id", cast: "::text", param: (v: string | null) => v },
  args: { column: "args", cast: "::jsonb", param: jsonParam },
  sentKey: { column: "sent_key", cast: "::text", param: (v: string | null) => v },
  settlesAtEpochMs: {
    column: "settles_at",
    cast: "::timestamptz",
    param: (v: number | null) => (v == null ? null : timeParam(v, "settlesAtEpochMs")),
  },
};

/**
 * Compare-and-set in one statement: applies the patch where `version = expectedVersion`, bumps the
 * version, and inserts the events only when the row was updated. No row back: version mismatch.
 * Fields present with value `undefined` are left unchanged, except `result` (cleared).
 * With `onlyIfLeaseExpired` it applies only while `lease_until_at < now()`: the lease is judged by the
 * database's clock, never the caller's (rule 9).
 * With `durable: false` the statement sets `synchronous_commit = off` for its own transaction
 * (`set_config(…, true)`, i.e. `SET LOCAL`), so its commit does not wait for the WAL flush; it runs
 * on the same connection as every other statement (no second pool, no second backend to wake).
 */
export function updateSql(
  tenant: string,
  key: string,
  expectedVersion: number,
  patch: IntentPatch,
  events: IntentEvent[],
  nowEpochMs: number,
  options: { durable?: boolean; onlyIfLeaseExpired?: boolean } = {},
): Statement {
  const values: unknown[] = [key, expectedVersion, timeParam(nowEpochMs, "nowEpochMs"), eventsParam(events), tenant];
  const sets: string[] = [];
  let used = 0; // bit i: the i-th patch field is set
  for (const [i, field] of (Object.keys(PATCH_COLUMNS) as PatchKey[]).entries()) {
    if (!(field in patch)) continue;
    const value = patch[field];
    if (value === undefined && field !== "result") continue;
    const spec = PATCH_COLUMNS[field];
    values.push(spec.param(value as never));
    sets.push(`${spec.column} = $${values.length}${spec.cast}`);
    used |= 1 << i;
  }
  sets.push("version = version + 1", "updated_at = $3");
  const durable = options.durable !== false;
  const lease = options.onlyIfLeaseExpired === true;
  return {
    // One prepared statement per combination of patched fields (a handful in practice) and options.
    name: `tristate_update_v4_${used.toString(36)}${durable ? "" : "_async"}${lease ? "_lease" : ""}`,
    // The filter holds for the updated row, so set_config runs in every transaction that writes.
    text: `WITH upd AS (
  UPDATE intent_records SET ${sets.join(", ")}
  WHERE tenant = $5 AND key = $1 AND version = $2${lease ? " AND lease_until_at < now()" : ""}${durable ? "" : " AND set_config('synchronous_commit', 'off', true) = 'off'"}
  RETURNING ${RECORD_COLUMNS}
), ev AS (
  ${insertEventsSql("$4", "$5", "upd")}
)
SELECT * FROM upd`,
    values,
  };
}

/**
 * Takes due records in one statement: locks up to `limit` PENDING/UNKNOWN records whose re-check time
 * has passed and whose lease has too, oldest re-check first, skipping rows other sweepers hold (one
 * range of the `live_recheck` partial index, the lease compared in the index; a record without a
 * re-check is never in the range); moves them to UNKNOWN with the new lease — their re-check left as
 * it is — and appends `lease_expired` (was PENDING) or `sweep` events. A PENDING record's settle
 * window is pushed to start no earlier than `nowEpochMs` (the store's clock).
 */
export function claimStaleSql(
  tenant: string,
  options: { nowEpochMs: number; limit: number; leaseUntilEpochMs: number },
): Statement {
  return {
    name: "tristate_claim_stale_v6",
    text: `WITH due AS (
  SELECT key, status AS prev_status, lease_until_at AS prev_lease, GREATEST(recheck_at, lease_until_at) AS prev_deadline,
    recheck_at AS prev_recheck
  FROM intent_records
  WHERE tenant = $4 AND status IN ('PENDING', 'UNKNOWN') AND recheck_at < $1 AND lease_until_at < $1
  ORDER BY recheck_at, key
  LIMIT $2
  FOR UPDATE SKIP LOCKED
), upd AS (
  UPDATE intent_records r SET status = 'UNKNOWN', lease_until_at = $3, version = r.version + 1, updated_at = $1,
    -- a PENDING record's settle window (its lease + timeout + settle) restarts no earlier than now (rule 5b)
    settles_at = CASE WHEN due.prev_status = 'PENDING' AND r.settles_at IS NOT NULL
      THEN GREATEST(r.settles_at, $1 + (r.settles_at - due.prev_lease)) ELSE r.settles_at END
  FROM due WHERE r.tenant = $4 AND r.key = due.key
    -- implied by the join; keeps the plan on the primary key whatever the statistics say (a generic
    -- plan built on stale ones once joined a scan of the whole table to each taken row)
    AND r.key = ANY (ARRAY(SELECT key FROM due))
  RETURNING ${RECORD_COLUMNS.replace(/\b(tenant|key|status|version|lease_until_at|recheck_at)\b/g, "r.$1")}, due.prev_status,
    due.prev_deadline, due.prev_recheck
), ev AS (
  INSERT INTO intent_events (tenant, key, type, at, data)
  SELECT tenant, key, (CASE WHEN prev_status = 'PENDING' THEN 'lease_expired' ELSE 'sweep' END)::"IntentEventType", $1,
    jsonb_build_object('previousStatus', prev_status,
      'previousDeadlineEpochMs', round(extract(epoch FROM prev_deadline) * 1000)::bigint)
  FROM upd ORDER BY prev_recheck, key
)
SELECT * FROM upd ORDER BY prev_recheck, key`,
    values: [
      timeParam(options.nowEpochMs, "nowEpochMs"),
      options.limit,
      timeParam(options.leaseUntilEpochMs, "leaseUntilEpochMs"),
      tenant,
    ],
  };
}

/** Appends events to the tenant's records' timelines, in order (the records must exist). */
export function appendEventsSql(tenant: string, events: IntentEvent[]): Statement {
  return {
    name: "tristate_append_events_v1",
    text: insertEventsSql("$1", "$2"),
    values: [eventsParam(events), tenant],
  };
}

/** A record's timeline (of the tenant), oldest first; `id` comes back as text (bigint). */
export function listEventsSql(tenant: string, key: string): Statement {
  return {
    name: "tristate_list_events_v1",
    text: "SELECT id, key, type, at, data FROM intent_events WHERE tenant = $1 AND key = $2 ORDER BY id",
    values: [tenant, key],
  };
}
