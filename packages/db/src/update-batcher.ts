import type { IntentRecord, StoredIntentEvent } from "@tristate/core";
import type { RunStatement } from "./claim-batcher.ts";
import { GroupCommit, type GroupCommitOptions } from "./group-commit.ts";
import { type EventRow, type RecordRow, toIntentRecord, toStoredEvent } from "./intent-row.ts";
import { listEventsSql, updateSql } from "./intent-sql.ts";
import { type BatchedUpdate, updateBatchSql, updateShape } from "./update-batch-sql.ts";

/**
 * Group commit of compare-and-sets ({@link GroupCommit} with {@link updateBatchSql}). Writes of one
 * shape (same fields, durability and lease condition) share a statement; two writes of one record
 * never do; a write that goes alone uses the single-row `updateSql`. Each resolves after its statement committed (durably when the write is durable) with
 * the updated record, or null when its own compare-and-set lost — as a lone `update` would.
 */
export function updateBatcher(
  run: RunStatement,
  options: GroupCommitOptions = {},
): GroupCommit<BatchedUpdate, IntentRecord | null> {
  const shapes = new WeakMap<BatchedUpdate, string>();
  const shape = (u: BatchedUpdate) => {
    let s = shapes.get(u);
    if (s === undefined) {
      s = updateShape(u);
      shapes.set(u, s);
    }
    return s;
  };
  return new GroupCommit<BatchedUpdate, IntentRecord | null>(
    {
      fits: (a, b) => shape(a) === shape(b) && !(a.tenant === b.tenant && a.key === b.key),
      async runOne(u) {
        const options = { durable: u.durable, onlyIfLeaseExpired: u.onlyIfLeaseExpired };
        const [row] = await run<RecordRow>(
          updateSql(u.tenant, u.key, u.expectedVersion, u.patch, u.events, u.nowEpochMs, options),
        );
        return row ? toIntentRecord(row) : null;
      },
      async run(batch) {
        const rows = await run<RecordRow & { i: number }>(updateBatchSql(batch));
        const out: (IntentRecord | null)[] = batch.map(() => null);
        for (const row of rows) out[row.i] = toIntentRecord(row);
        return out;
      },
    },
    options,
  );
}

/** One timeline read of a batch. */
export interface BatchedEventsRead {
  tenant: string;
  key: string;
}

/**
 * Timelines read together: concurrent `listEvents` of one tenant share one statement (`key = ANY`),
 * each getting its own record's events, oldest first — as a lone read would (a read commits nothing).
 */
export function eventsReader(
  run: RunStatement,
  options: GroupCommitOptions = {},
): GroupCommit<BatchedEventsRead, StoredIntentEvent[]> {
  return new GroupCommit<BatchedEventsRead, StoredIntentEvent[]>(
    {
      fits: (a, b) => a.tenant === b.tenant,
      async runOne(r) {
        return (await run<EventRow>(listEventsSql(r.tenant, r.key))).map(toStoredEvent);
      },
      async run(batch) {
        const keys = [...new Set(batch.map((r) => r.key))];
        const rows = await run<EventRow>({
          name: "tristate_list_events_batch_v1",
          text: "SELECT id, key, type, at, data FROM intent_events WHERE tenant = $1 AND key = ANY($2::text[]) ORDER BY key, id",
          values: [batch[0]!.tenant, keys],
        });
        const byKey = new Map<string, StoredIntentEvent[]>();
        for (const row of rows) {
          const list = byKey.get(row.key) ?? [];
          list.push(toStoredEvent(row));
          byKey.set(row.key, list);
        }
        return batch.map((r) => byKey.get(r.key) ?? []);
      },
    },
    options,
  );
}
