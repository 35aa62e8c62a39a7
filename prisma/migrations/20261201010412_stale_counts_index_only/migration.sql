-- DropIndex
DROP INDEX "intent_records_live_deadline_idx";

-- CreateIndex
CREATE INDEX "intent_records_live_deadline_idx" ON "intent_records"("tenant", "deadline_at", "key", "status", "tool") WHERE (status = ANY (ARRAY['PENDING'::"IntentStatus", 'UNKNOWN'::"IntentStatus"]));
