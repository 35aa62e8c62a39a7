import type { IntentEvent, IntentPatch } from "@tristate/core";
import { jsonParam, RECORD_COLUMNS, timeParam } from "./intent-row.ts";
import { PATCH_COLUMNS, type PatchKey, type Statement } from "./intent-sql.ts";

/** One compare-and-set of a batch (see `updateSql` for the meaning of each part). */
export interface BatchedUpdate {
  tenant: string;
  key: string;
  expectedVersion: number;
  patch: IntentPatch;
  events: IntentEvent[];
  nowEpochMs: number;
  durable: boolean;
  onlyIfLeaseExpired: boolean;
}

const FIELDS = Object.keys(PATCH_COLUMNS) as PatchKey[];

/** The patch fields a write sets, in {@link PATCH_COLUMNS} order (`undefined` is skipped, except `result`: cleared). */
function setFields(patch: IntentPatch): PatchKey[] {
  return FIELDS.filter((f) => f in patch && (patch[f] !== undefined || f === "result"));
}

/**
 * The statement shape of an update: writes of one shape (same fields set, same durability and lease
 * condition) can share a multi-row statement.
 */
export function updateShape(u: BatchedUpdate): string {
  let used = 0;
  for (const f of setFields(u.patch)) used |= 1 << FIELDS.indexOf(f);
  return `${used.toString(36)}${u.durable ? "" : "_async"}${u.onlyIfLeaseExpired ? "_lease" : ""}`;
}

/** How a field travels in the batch's JSON: declared type in `jsonb_to_recordset`, and the SQL that writes it. */
function column(f: PatchKey, i: number): { decl: string; expr: string } {
  const cast = PATCH_COLUMNS[f].cast;
  const c = `x.c${i}`;
  if (cast === "::timestamptz")
    return { decl: `c${i} float8`, expr: `timestamptz 'epoch' + ${c} * interval '1 millisecond'` };
  // JSON travels as its text, so a JSON null (a real null result) stays apart from SQL NULL (none).
  if (cast === "::jsonb") return { decl: `c${i} text`, expr: `${c}::jsonb` };
  if (cast === "::int") return { decl: `c${i} int`, expr: c };
  if (cast === "::boolean") return { decl: `c${i} boolean`, expr: c };
  return { decl: `c${i} text`, expr: `${c}${cast}` };
}

/**
 * Several compare-and-sets of one shape ({@link updateShape}) in one statement and one commit. Each
 * row applies its patch only where its own `version` still matches (and, with the lease condition,
 * only while `lease_until_at < now()`), bumps the version and inserts its events only when it updated —
 * exactly `updateSql`'s semantics per row. The batch must not hold two writes of one record (a row
 * is updated once per statement). Rows: `i` (the write's index) + {@link RECORD_COLUMNS} of each
 * updated record; a write with no row lost its compare-and-set.
 * @throws RangeError for a non-finite time (before anything is sent).
 */
export function updateBatchSql(updates: readonly BatchedUpdate[]): Statement {
  const first = updates[0]!;
  const fields = setFields(first.patch);
  const cols = fields.map((f, i) => ({ f, ...column(f, i) }));
  const input = updates.map((u, i) => {
    const row: Record<string, unknown> = {
      i,
      tenant: u.tenant,
      key: u.key,
      version: u.expectedVersion,
      now_ms: timeParam(u.nowEpochMs, "nowEpochMs").getTime(),
      events: u.events.map((e) => ({
        key: e.key,
        type: e.type,
        at: timeParam(e.atEpochMs, "event atEpochMs").getTime(),
        data: e.data,
      })),
    };
    for (const [j, { f }] of cols.entries()) {
      const value = PATCH_COLUMNS[f].param(u.patch[f] as never);
      row[`c${j}`] = value instanceof Date ? value.getTime() : value;
    }
    return row;
  });
  const sets = [
    ...cols.map(({ f, expr }) => `${PATCH_COLUMNS[f].column} = ${expr}`),
    "version = r.version + 1",
    "updated_at = timestamptz 'epoch' + x.now_ms * interval '1 millisecond'",
  ];
  const lease = first.onlyIfLeaseExpired ? " AND r.lease_until_at < now()" : "";
  const async = first.durable ? "" : " AND set_config('synchronous_commit', 'off', true) = 'off'";
  const returning = RECORD_COLUMNS.replace(/\b(tenant|key|version)\b/g, "r.$1");
  return {
    name: `tristate_update_batch_v2_${updateShape(first)}`,
    text: `WITH x AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(i int, tenant text, key text, version int, now_ms float8, events jsonb${cols.map((c) => `, ${c.decl}`).join("")})
), upd AS (
  UPDATE intent_records r SET ${sets.join(", ")}
  FROM x WHERE r.tenant = x.tenant AND r.key = x.key AND r.version = x.version${lease}${async}
  RETURNING x.i, x.events, ${returning}
), ev AS (
  INSERT INTO intent_events (tenant, key, type, at, data)
  SELECT upd.tenant, e.e->>'key', (e.e->>'type')::"IntentEventType",
    timestamptz 'epoch' + (e.e->>'at')::float8 * interval '1 millisecond', e.e->'data'
  FROM upd, jsonb_array_elements(upd.events) WITH ORDINALITY AS e(e, ord)
  ORDER BY upd.i, e.ord
)
SELECT i, ${RECORD_COLUMNS} FROM upd ORDER BY i`,
    values: [jsonParam(input as never)],
  };
}
