/**
 * `tsx src/bench/notify-trigger-cost.ts [--calls N] [--reverse]` — what the notification outbox
 * triggers (issue 23 §3: `intent_records_notify_insert` / `_update`) cost the hot path: `executor.call`
 * (loopback HTTP tool, `PrismaIntentStore`, async outcome: one claim, one outcome update) on two fresh
 * databases, in alternating blocks of 100 calls — the current migrations, and the same without the two
 * triggers. An ordinary call's rows fail the triggers' WHEN clauses, so the function never runs.
 * Prints p50/p95/p99 per variant. Both databases are dropped at the end.
 */
import { compareSchemaVariants } from "./schema-variant-cost.ts";

const WITHOUT_NOTIFY_TRIGGERS =
  "DROP TRIGGER intent_records_notify_insert ON intent_records; DROP TRIGGER intent_records_notify_update ON intent_records";

compareSchemaVariants({
  withLabel: "notify triggers",
  withoutLabel: "without them",
  undoSql: WITHOUT_NOTIFY_TRIGGERS,
  runIdPrefix: "notify-trigger-cost",
}).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
