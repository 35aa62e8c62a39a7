/**
 * A claim that finds its step in the archive (rule 15) moves the record back to the live table before
 * the executor acts on it: a replay reads it, a new attempt after FAILED_NO_EFFECT updates it, a
 * conflict appends to its timeline — every later write goes by the live table's primary key.
 */
import { RECORD_COLUMNS } from "./intent-row.ts";
import type { Statement } from "./intent-sql.ts";
import { ARCHIVED_COLUMNS } from "./rollups/archive-intents.ts";

const prefixed = (alias: string) => ARCHIVED_COLUMNS.replace(/(\w+)/g, `${alias}.$1`);

/**
 * Moves the tenant's archived record with this key, and its timeline, back to the live tables in one
 * statement (so a record is in exactly one table at any snapshot, as the archiver keeps it) — unless
 * the live table already holds its key or its (run, step, tool). Its `updated_at` becomes the
 * database's now (the move is a write of the row), so the archiver, which takes only records
 * untouched since its cut, does not take it back before the executor acts on it. Rows: the restored record
 * ({@link RECORD_COLUMNS}); none when nothing was moved (another claim restored it first: read the
 * live table).
 */
export function restoreArchivedSql(tenant: string, key: string): Statement {
  return restoreStatement("tristate_restore_archived_v1", "a.key = $2", [tenant, key]);
}

/**
 * Moves every archived record of the tenant's run, and their timelines, back to the live tables in
 * one statement (rule 15 for an abort, rule 13: an abort must see, and may have to undo, steps the
 * archive already moved) — each unless the live table already holds its key or its (run, step, tool).
 * Reaches the archive through its (tenant, run_id, step_id, tool) index. `updated_at` becomes the
 * database's now, as for {@link restoreArchivedSql}. Rows: the restored records.
 */
export function restoreArchivedRunSql(tenant: string, runId: string): Statement {
  return restoreStatement("tristate_restore_archived_run_v1", "a.run_id = $2", [tenant, runId]);
}

/**
 * The one move back (both functions above): the archived records `which` selects ($1 the tenant, $2
 * its value), each unless the live table holds its key or its (run, step, tool), with their timelines.
 */
function restoreStatement(name: string, which: string, values: [string, string]): Statement {
  return {
    name,
    text: `WITH rec AS (
  DELETE FROM intent_records_archive a WHERE a.tenant = $1 AND ${which}
    AND NOT EXISTS (SELECT 1 FROM intent_records r WHERE r.tenant = $1
      AND (r.key = a.key OR (r.run_id = a.run_id AND r.step_id = a.step_id AND r.tool = a.tool)))
  RETURNING ${prefixed("a")}
), back AS (
  INSERT INTO intent_records (${ARCHIVED_COLUMNS}) SELECT ${ARCHIVED_COLUMNS.replace(/\bupdated_at\b/, "now()")} FROM rec
  RETURNING ${RECORD_COLUMNS}
), ev AS (
  DELETE FROM intent_events_archive e WHERE e.tenant = $1 AND e.key = ANY (ARRAY(SELECT key FROM rec))
  RETURNING e.id, e.tenant, e.key, e.type, e.at, e.data
), ev_back AS (
  INSERT INTO intent_events (id, tenant, key, type, at, data) SELECT * FROM ev
)
SELECT * FROM back`,
    values,
  };
}
