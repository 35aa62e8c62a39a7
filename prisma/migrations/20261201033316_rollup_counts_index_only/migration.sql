-- CreateIndex
CREATE INDEX "intent_rollups_counts_idx" ON "intent_rollups"("tenant", "bucket_ms", "bucket_start", "tool", "calls", "unknown", "found", "absent_resent", "human_confirmed_effect", "human_confirmed_no_effect", "human_resent", "open", "other", "compensations_run", "compensations_failed");
