/**
 * `tsx src/bench/identity-index-cost.ts [--calls N] [--reverse]` — what search by business identity
 * (issue 22 §4) costs the hot path: `executor.call` (loopback HTTP tool, `PrismaIntentStore`, async
 * outcome) on two fresh databases, in alternating blocks of 100 calls so drift falls on both alike —
 * the current migrations, and the same without the GIN index on `intent_records.identity` (every
 * claim enters it, and every outcome update too: updates are never HOT). Prints p50/p95/p99 per
 * variant. Both databases are dropped at the end.
 */
import { compareSchemaVariants } from "./schema-variant-cost.ts";

const WITHOUT_IDENTITY_INDEX = "DROP INDEX intent_records_identity_idx";

compareSchemaVariants({
  withLabel: "identity index",
  withoutLabel: "without it",
  undoSql: WITHOUT_IDENTITY_INDEX,
  runIdPrefix: "identity-index-cost",
}).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
