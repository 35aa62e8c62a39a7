import type { IntentRecord } from "@tristate/core";
import type { RunStatement } from "./claim-batcher.ts";
import { GroupCommit, type GroupCommitOptions } from "./group-commit.ts";
import { type RecordRow, toIntentRecord } from "./intent-row.ts";
import { type BatchedUpdate, updateBatchSql, updateShape } from "./update-batch-sql.ts";

/**
 * Group commit of compare-and-sets ({@link GroupCommit} with {@link updateBatchSql}). Writes of one
 * shape (same fields, durability and lease condition) share a statement; two writes of one record
 * never do. Each resolves after its statement committed (durably when the write is durable) with
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
