-- CreateIndex
CREATE INDEX "intent_records_trace_idx" ON "intent_records"("tenant", "trace_id") WHERE (trace_id IS NOT NULL);

-- CreateIndex
CREATE INDEX "run_plans_updated_idx" ON "run_plans"("tenant", "updated_at");
