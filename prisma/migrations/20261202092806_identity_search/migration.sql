-- Search by business identity (issue 22 §4: "what happened to order A-1182?"): GIN indexes (jsonb_ops:
-- an entry per key and per value) on both tables' identity, serving `identity @? '$.* ? (@ == "…")'`.
-- CreateIndex
CREATE INDEX "intent_records_identity_idx" ON "intent_records" USING GIN ("identity" jsonb_ops);

-- CreateIndex
CREATE INDEX "intent_records_archive_identity_idx" ON "intent_records_archive" USING GIN ("identity" jsonb_ops);
