/**
 * The `run_aborts` table's statements (DESIGN.md rule 13): record a run's abort once (the database's
 * clock, rule 9), read it, and find the effects of aborted runs that settled and were never undone.
 */
import { RUN_ABORT_VIAS, type RunAbort, type RunAbortInput } from "@tristate/core";
import { RECORD_COLUMNS, timeParam } from "./intent-row.ts";
import type { Statement } from "./intent-sql.ts";

/** A row of `run_aborts` as the statements below return it. */
export interface RunAbortRow {
  run_id: string;
  aborted_at: Date;
  actor_key_id: string;
  actor_name: string;
  via: string;
  reason: string;
  /** True when this statement wrote the row (the first abort). */
  first?: boolean;
}

const ABORT_COLUMNS = "run_id, aborted_at, actor_key_id, actor_name, via, reason";

/**
 * Inserts the run's abort unless it has one, and returns the row that stands: the first abort's
 * (`first` false when it was there already). Zero rows when a racing insert committed after this
 * statement's snapshot (its conflict made this one skip): read it again with {@link getRunAbortSql}.
 */
export function markRunAbortedSql(tenant: string, runId: string, by: RunAbortInput): Statement {
  return {
    name: "tristate_mark_run_aborted_v1",
    text: `WITH ins AS (
  INSERT INTO run_aborts (tenant, run_id, aborted_at, actor_key_id, actor_name, via, reason)
  VALUES ($1, $2, now(), $3, $4, $5, $6)
  ON CONFLICT (tenant, run_id) DO NOTHING
  RETURNING ${ABORT_COLUMNS}
)
SELECT true AS first, * FROM ins
UNION ALL
SELECT false AS first, ${ABORT_COLUMNS} FROM run_aborts WHERE tenant = $1 AND run_id = $2 AND NOT EXISTS (SELECT 1 FROM ins)`,
    values: [tenant, runId, by.actorKeyId, by.actorName, by.via, by.reason],
  };
}

/** The run's abort, if any. */
export function getRunAbortSql(tenant: string, runId: string): Statement {
  return {
    name: "tristate_get_run_abort_v1",
    text: `SELECT ${ABORT_COLUMNS} FROM run_aborts WHERE tenant = $1 AND run_id = $2`,
    values: [tenant, runId],
  };
}

/**
 * The records of the tenant's aborted runs that settled SUCCEEDED, wait for no person, are not
 * compensation steps, and have a registered compensation (or correction) not yet called — or are of
 * an uncorrectable tool (irreversible, no corrective) never sent to a person for correction (no
 * `needs_human` event `IRREVERSIBLE_NEEDS_CORRECTION`, read through the events' (tenant, key, id)
 * index) — last changed at or before the given time; oldest abort first. Starts from `run_aborts` (small) and reaches the records
 * through the (tenant, run_id, step_id, tool) unique index.
 */
export function listUndoDueSql(
  tenant: string,
  settledByEpochMs: number,
  limit: number,
  uncorrectableTools: readonly string[] = [],
): Statement {
  return {
    name: "tristate_list_undo_due_v2",
    text: `SELECT ${RECORD_COLUMNS} FROM (
  SELECT r.*, a.aborted_at AS run_aborted_at
  FROM run_aborts a JOIN intent_records r ON r.tenant = a.tenant AND r.run_id = a.run_id
  WHERE a.tenant = $1 AND r.status = 'SUCCEEDED' AND NOT r.needs_human
    AND r.step_id NOT LIKE 'compensate:%' AND r.step_id NOT LIKE 'correct:%'
    AND r.updated_at <= $2
    AND (
      (r.compensation IS NOT NULL AND NOT (r.compensation ? 'key'))
      OR (r.compensation IS NULL AND r.tool = ANY($4::text[]) AND NOT EXISTS (
        SELECT 1 FROM intent_events e
        WHERE e.tenant = r.tenant AND e.key = r.key AND e.type = 'needs_human'
          AND e.data->>'code' = 'IRREVERSIBLE_NEEDS_CORRECTION'))
    )
) AS due
ORDER BY run_aborted_at, created_at, key
LIMIT $3`,
    values: [tenant, timeParam(settledByEpochMs, "settledByEpochMs"), limit, [...uncorrectableTools]],
  };
}

/** A row as a {@link RunAbort}. @throws TypeError for a `via` the executor never writes. */
export function toRunAbort(row: RunAbortRow): RunAbort {
  const via = RUN_ABORT_VIAS.find((v) => v === row.via);
  if (!via)
    throw new TypeError(
      `run_aborts row of run ${row.run_id}: via "${row.via}" is not one of ${RUN_ABORT_VIAS.join(", ")}`,
    );
  return {
    runId: row.run_id,
    abortedAtEpochMs: row.aborted_at.getTime(),
    actorKeyId: row.actor_key_id,
    actorName: row.actor_name,
    via,
    reason: row.reason,
  };
}
