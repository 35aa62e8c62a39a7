/**
 * `tsx src/bench/hot-path-indexes.ts [--calls N] [--reverse]` — what issue 14's read-side schema costs the hot
 * path: `executor.call` (loopback HTTP tool, `PrismaIntentStore`, async outcome) on two fresh
 * databases, in alternating blocks of 100 calls so drift falls on both alike:
 *
 * - `issue 14`: the current migrations (created_at index, five partial live-set indexes instead of
 *   (tenant, status, deadline), the ever_unknown, rollup-dirty and compensation-dirty triggers);
 * - `before issue 14`: the same database with that schema change undone (the partial indexes, the
 *   created_at index and the ever_unknown, rollup-dirty and compensation-dirty triggers dropped,
 *   (tenant, status, deadline) back).
 *
 * Prints p50/p95/p99 per variant. Both databases are dropped at the end.
 */
import { compareSchemaVariants } from "./schema-variant-cost.ts";

const UNDO_ISSUE_14 = `
  DROP TRIGGER intent_records_ever_unknown ON intent_records;
  DROP TRIGGER intent_records_rollup_dirty ON intent_records;
  DROP TRIGGER intent_records_compensation_dirty_insert ON intent_records;
  DROP TRIGGER intent_records_compensation_dirty_update ON intent_records;
  DROP INDEX intent_records_created_idx, intent_records_live_recheck_idx, intent_records_live_created_idx,
    intent_records_needs_human_idx, intent_records_resolved_idx;
  CREATE INDEX intent_records_status_deadline_idx ON intent_records (tenant, status, lease_until_at);`;

compareSchemaVariants({
  withLabel: "issue 14",
  withoutLabel: "before issue 14",
  undoSql: UNDO_ISSUE_14,
  runIdPrefix: "hot-path-indexes",
}).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
