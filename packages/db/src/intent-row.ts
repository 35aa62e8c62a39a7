import {
  type IntentError,
  type IntentEvent,
  type IntentRecord,
  type IntentStatus,
  type JsonValue,
  parseRecordedCompensation,
  type StoredIntentEvent,
  type StoredResolution,
  storableJson,
} from "@tristate/core";

/**
 * The columns of `intent_records` as read by the raw-SQL paths, in one select list. `no_result`
 * separates SQL NULL (no result recorded) from JSON `null` (a real `null` result), which `pg`
 * would both hand back as `null`.
 */
export const RECORD_COLUMNS = `tenant, key, run_id, step_id, tool, args, identity, status, attempt, lease_until_at, recheck_at, result,
  (result IS NULL) AS no_result, error, compensation, resolution, needs_human, reconcile_sweeps, version,
  created_at, updated_at, finished_at, trace_id, sent_key, settles_at`;

/** One row of {@link RECORD_COLUMNS} as `pg` parses it (jsonb → JS values, timestamptz → Date). */
export interface RecordRow {
  tenant: string;
  key: string;
  run_id: string;
  step_id: string;
  tool: string;
  args: JsonValue;
  identity: Record<string, string>;
  status: IntentStatus;
  attempt: number;
  lease_until_at: Date;
  recheck_at: Date | null;
  result: JsonValue;
  no_result: boolean;
  error: IntentError | null;
  /** Parsed by {@link toIntentRecord} (`parseRecordedCompensation`). */
  compensation: unknown;
  resolution: StoredResolution | null;
  needs_human: boolean;
  reconcile_sweeps: number;
  version: number;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
  trace_id: string | null;
  sent_key: string | null;
  settles_at: Date | null;
}

/**
 * Converts a row of {@link RECORD_COLUMNS} to the port's record (times as epoch ms).
 * @throws TypeError naming the key when the stored compensation is malformed.
 */
export function toIntentRecord(row: RecordRow): IntentRecord {
  return {
    tenant: row.tenant,
    key: row.key,
    runId: row.run_id,
    stepId: row.step_id,
    tool: row.tool,
    args: row.args,
    identity: row.identity,
    status: row.status,
    attempt: row.attempt,
    leaseUntilEpochMs: row.lease_until_at.getTime(),
    recheckAtEpochMs: row.recheck_at ? row.recheck_at.getTime() : null,
    result: row.no_result ? undefined : row.result,
    error: row.error,
    compensation: parseRecordedCompensation(row.compensation, row.key),
    resolution: row.resolution,
    needsHuman: row.needs_human,
    reconcileSweeps: row.reconcile_sweeps,
    version: row.version,
    createdAtEpochMs: row.created_at.getTime(),
    updatedAtEpochMs: row.updated_at.getTime(),
    finishedAtEpochMs: row.finished_at ? row.finished_at.getTime() : null,
    traceId: row.trace_id,
    sentKey: row.sent_key,
    settlesAtEpochMs: row.settles_at ? row.settles_at.getTime() : null,
  };
}

/**
 * Serialises a JSON value for a `$n::jsonb` parameter. `pg` would turn JS arrays into PostgreSQL
 * arrays and strings into bare text, so every JSON parameter is sent as its JSON text — in the form
 * `jsonb` accepts (`storableJson`: NUL and lone surrogates a remote answered are kept as the literal
 * text of their escapes, issue 21 §3).
 * @returns the JSON text, or null (SQL NULL) for `undefined`.
 */
export function jsonParam(value: JsonValue | undefined): string | null {
  return value === undefined ? null : (storableJson(value) ?? null);
}

/**
 * An epoch-ms time as a timestamptz parameter.
 * @throws RangeError when the time is not a finite number (every record has a deadline, rule 8).
 */
export function timeParam(epochMs: number, field: string): Date {
  if (!Number.isFinite(epochMs)) throw new RangeError(`${field} must be a finite epoch-ms number, got ${epochMs}`);
  return new Date(epochMs);
}

/** Events as one `jsonb` parameter, expanded in SQL by {@link insertEventsSql}. */
export function eventsParam(events: IntentEvent[]): string {
  for (const e of events) timeParam(e.atEpochMs, "event atEpochMs");
  return storableJson(events.map((e) => ({ key: e.key, type: e.type, at: e.atEpochMs, data: e.data }))) as string;
}

/**
 * SQL that inserts the events of a `jsonb` array parameter `$n`, in array order (ids increase with it),
 * for the tenant of parameter `tenantParam`. `from` is an extra FROM item that gates the insert (e.g.
 * `ins`: only when the claim inserted).
 */
export function insertEventsSql(param: string, tenantParam: string, from?: string): string {
  return `INSERT INTO intent_events (tenant, key, type, at, data)
    SELECT ${tenantParam}::text, x.e->>'key', (x.e->>'type')::"IntentEventType",
      timestamptz 'epoch' + (x.e->>'at')::float8 * interval '1 millisecond', x.e->'data'
    FROM ${from ? `${from}, ` : ""}jsonb_array_elements(${param}::jsonb) WITH ORDINALITY AS x(e, ord)
    ORDER BY x.ord`;
}

/** A stored event row as Prisma's typed client returns it. */
export interface EventRow {
  /** bigint from Prisma, decimal text from `pg`. */
  id: bigint | string;
  key: string;
  type: string;
  at: Date;
  data: unknown;
}

/** Converts a stored event row to the port's event (id as a number, time as epoch ms). */
export function toStoredEvent(row: EventRow): StoredIntentEvent {
  return {
    id: Number(row.id),
    key: row.key,
    type: row.type as StoredIntentEvent["type"],
    atEpochMs: row.at.getTime(),
    data: row.data as StoredIntentEvent["data"],
  };
}
