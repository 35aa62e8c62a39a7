-- Issue 19: one meaning per field. `deadline_at` was a call's lease, a queued record's re-check time,
-- and "never" written as a time a century ahead. It becomes the lease (`lease_until_at`, renamed: its
-- values stay) and `recheck_at` (when the sweeper next takes the record; NULL: only a person settles it).
-- Hand-written (Prisma's diff would drop the column and its data): rename, add, move the data.

-- DropIndex
DROP INDEX "intent_records_live_deadline_idx";

ALTER TABLE "intent_records" RENAME COLUMN "deadline_at" TO "lease_until_at";
ALTER TABLE "intent_records" ADD COLUMN "recheck_at" TIMESTAMPTZ(3);
ALTER TABLE "intent_records_archive" RENAME COLUMN "deadline_at" TO "lease_until_at";
ALTER TABLE "intent_records_archive" ADD COLUMN "recheck_at" TIMESTAMPTZ(3);

-- The data. "Never" was written as the writer's now + 100 years: a deadline more than 50 years after
-- the record's creation is that (this one decoding of it is the last). Such a record has no re-check,
-- and its lease ended when it was queued (its last update at the latest).
-- Live records: due when their deadline passes, as before (PENDING: the lease end; UNKNOWN: the time
-- it was due, the lease being past or ending then). Settled records keep their last lease and no re-check.
UPDATE "intent_records" SET
  "recheck_at" = CASE WHEN "lease_until_at" > "created_at" + interval '50 years' THEN NULL ELSE "lease_until_at" END,
  "lease_until_at" = CASE WHEN "lease_until_at" > "created_at" + interval '50 years'
    THEN LEAST("updated_at", "lease_until_at") ELSE "lease_until_at" END
WHERE "status" IN ('PENDING', 'UNKNOWN') OR "lease_until_at" > "created_at" + interval '50 years';
UPDATE "intent_records_archive" SET "lease_until_at" = LEAST("updated_at", "lease_until_at")
WHERE "lease_until_at" > "created_at" + interval '50 years';

-- The operator audit's record snapshots (JSON) in the same shape.
CREATE FUNCTION pg_temp.split_deadline(r jsonb) RETURNS jsonb LANGUAGE sql AS $$
  SELECT (r - 'deadlineEpochMs') || jsonb_build_object(
    'leaseUntilEpochMs', CASE WHEN never THEN least(r->'updatedAtEpochMs', r->'deadlineEpochMs') ELSE r->'deadlineEpochMs' END,
    'recheckAtEpochMs', CASE WHEN never OR NOT (r->>'status' IN ('PENDING', 'UNKNOWN')) THEN 'null'::jsonb
      ELSE r->'deadlineEpochMs' END)
  FROM (SELECT (r->>'deadlineEpochMs')::float8
    > (r->>'createdAtEpochMs')::float8 + extract(epoch FROM interval '50 years') * 1000 AS never) x
$$;
UPDATE "audit_entries" SET "before" = pg_temp.split_deadline("before") WHERE "before" ? 'deadlineEpochMs';
UPDATE "audit_entries" SET "after" = pg_temp.split_deadline("after") WHERE "after" ? 'deadlineEpochMs';

-- CreateIndex: the sweeper's claim (`claimStale`: due by re-check, oldest first, its lease checked in the
-- index) and the stale PENDING reads.
CREATE INDEX "intent_records_live_recheck_idx" ON "intent_records"("tenant", "recheck_at", "key", "lease_until_at", "status", "tool") WHERE (status = ANY (ARRAY['PENDING'::"IntentStatus", 'UNKNOWN'::"IntentStatus"]));
