-- DropIndex
DROP INDEX "intent_records_needs_human_idx";

-- DropIndex
DROP INDEX "intent_records_run_idx";

-- DropIndex
DROP INDEX "intent_records_status_idx";
