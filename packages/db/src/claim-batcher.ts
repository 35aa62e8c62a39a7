import type { IntentRecord } from "@tristate/core";
import {
  type BatchedClaim,
  type ClaimBatchRow,
  claimBatchSql,
  claimedRecord,
  conflictsWithin,
} from "./claim-batch-sql.ts";
import { GroupCommit, type GroupCommitOptions } from "./group-commit.ts";
import { toIntentRecord } from "./intent-row.ts";
import type { Statement } from "./intent-sql.ts";

/** Runs one statement and returns its rows (the store's pool, named or not). */
export type RunStatement = <T>(statement: Statement) => Promise<T[]>;

/**
 * A batched claim's answer: inserted, or lost to `existing` (null: the winner is not visible yet, read
 * it again; `archived`: the existing record is in the archive table).
 */
export type BatchClaimResult =
  | { claimed: true; record: IntentRecord }
  | { claimed: false; existing: IntentRecord | null; archived: boolean };

/**
 * Group commit of claims ({@link GroupCommit} with {@link claimBatchSql}). Per-claim semantics are the
 * single claim's: each claim resolves only after the statement that holds it committed durably
 * (synchronous commit on); claims that compete for one record ({@link conflictsWithin}) never share a
 * batch (the later one waits for the next), so exactly one wins and the others get the winner's
 * record; a claim's events are written only when it inserted.
 */
export function claimBatcher(
  run: RunStatement,
  options: GroupCommitOptions = {},
): GroupCommit<BatchedClaim, BatchClaimResult> {
  return new GroupCommit<BatchedClaim, BatchClaimResult>(
    {
      fits: (a, b) => !conflictsWithin(a, b),
      async run(batch) {
        const rows = await run<ClaimBatchRow>(claimBatchSql(batch));
        return batch.map((claim, i): BatchClaimResult => {
          const row = rows[i];
          if (row?.i !== i) throw new Error(`claim batch returned row ${row?.i} for claim ${i}`);
          if (row.claimed_at) return { claimed: true, record: claimedRecord(claim, row.claimed_at) };
          if (row.key === null) return { claimed: false, existing: null, archived: false };
          return { claimed: false, existing: toIntentRecord(row), archived: row.archived };
        });
      },
    },
    options,
  );
}
