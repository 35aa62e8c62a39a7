-- DropIndex
DROP INDEX "intent_records_status_deadline_idx";

-- AlterTable
ALTER TABLE "intent_records" ADD COLUMN     "ever_unknown" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "intent_rollups" (
    "tenant" TEXT NOT NULL,
    "tool" TEXT NOT NULL,
    "bucket_ms" INTEGER NOT NULL,
    "bucket_start" TIMESTAMPTZ(3) NOT NULL,
    "calls" INTEGER NOT NULL,
    "unknown" INTEGER NOT NULL,
    "found" INTEGER NOT NULL,
    "absent_resent" INTEGER NOT NULL,
    "human_confirmed_effect" INTEGER NOT NULL,
    "human_confirmed_no_effect" INTEGER NOT NULL,
    "human_resent" INTEGER NOT NULL,
    "open" INTEGER NOT NULL,
    "other" INTEGER NOT NULL,
    "latency_samples" INTEGER NOT NULL,
    "latency_hist" JSONB NOT NULL,

    CONSTRAINT "intent_rollups_pkey" PRIMARY KEY ("tenant","bucket_ms","bucket_start","tool")
);

-- CreateTable
CREATE TABLE "intent_rollup_dirty" (
    "id" BIGSERIAL NOT NULL,
    "tenant" TEXT NOT NULL,
    "tool" TEXT NOT NULL,
    "minute" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "intent_rollup_dirty_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "intent_rollup_state" (
    "id" INTEGER NOT NULL,
    "refreshed_to" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "intent_rollup_state_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "intent_records_archive" (
    "tenant" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "run_id" TEXT NOT NULL,
    "step_id" TEXT NOT NULL,
    "tool" TEXT NOT NULL,
    "args" JSONB NOT NULL,
    "identity" JSONB NOT NULL,
    "status" "IntentStatus" NOT NULL,
    "attempt" INTEGER NOT NULL,
    "deadline_at" TIMESTAMPTZ(3) NOT NULL,
    "result" JSONB,
    "error" JSONB,
    "compensation" JSONB,
    "resolution" "Resolution",
    "needs_human" BOOLEAN NOT NULL DEFAULT false,
    "reconcile_sweeps" INTEGER NOT NULL DEFAULT 0,
    "version" INTEGER NOT NULL DEFAULT 1,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,
    "finished_at" TIMESTAMPTZ(3),
    "trace_id" TEXT,
    "sent_key" TEXT,
    "settles_at" TIMESTAMPTZ(3),
    "ever_unknown" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "intent_records_archive_pkey" PRIMARY KEY ("tenant","key")
);

-- CreateTable
CREATE TABLE "intent_events_archive" (
    "id" BIGINT NOT NULL,
    "tenant" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "type" "IntentEventType" NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "data" JSONB NOT NULL,

    CONSTRAINT "intent_events_archive_pkey" PRIMARY KEY ("tenant","id")
);

-- CreateIndex
CREATE INDEX "intent_rollups_bucket_idx" ON "intent_rollups"("bucket_ms", "bucket_start");

-- CreateIndex
CREATE INDEX "intent_rollup_dirty_minute_idx" ON "intent_rollup_dirty"("tenant", "minute");

-- CreateIndex
CREATE INDEX "intent_records_archive_created_idx" ON "intent_records_archive"("tenant", "created_at", "key");

-- CreateIndex
CREATE INDEX "intent_records_archive_run_idx" ON "intent_records_archive"("tenant", "run_id");

-- CreateIndex
CREATE INDEX "intent_events_archive_key_id_idx" ON "intent_events_archive"("tenant", "key", "id");

-- CreateIndex
CREATE INDEX "intent_records_created_idx" ON "intent_records"("tenant", "created_at", "key");

-- CreateIndex
CREATE INDEX "intent_records_live_deadline_idx" ON "intent_records"("tenant", "deadline_at", "key") WHERE (status IN ('PENDING', 'UNKNOWN'));

-- CreateIndex
CREATE INDEX "intent_records_live_created_idx" ON "intent_records"("tenant", "created_at", "key") WHERE (status IN ('PENDING', 'UNKNOWN'));

-- CreateIndex
CREATE INDEX "intent_records_needs_human_idx" ON "intent_records"("tenant", "created_at", "key") WHERE (needs_human);

-- CreateIndex
CREATE INDEX "intent_records_resolved_idx" ON "intent_records"("tenant", "created_at", "key") WHERE (resolution IS NOT NULL);

-- CreateIndex
CREATE INDEX "intent_records_compensated_idx" ON "intent_records"("tenant", "created_at") WHERE (compensation ? 'key');

-- Hand-written below: what the Prisma schema cannot express (its diff ignores functions and triggers).

-- ever_unknown: set whenever a record becomes UNKNOWN (or gets a resolution), by any writer. The WHEN
-- clause is evaluated in the row processing; the function runs only on that transition, so
-- the PENDING insert of the hot path and SUCCEEDED / FAILED_NO_EFFECT updates never call it.
CREATE FUNCTION intent_records_set_ever_unknown() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.ever_unknown := true;
  RETURN NEW;
END
$$;

CREATE TRIGGER intent_records_ever_unknown BEFORE INSERT OR UPDATE ON intent_records FOR EACH ROW
  WHEN (NOT NEW.ever_unknown AND (NEW.status = 'UNKNOWN' OR NEW.resolution IS NOT NULL))
  EXECUTE FUNCTION intent_records_set_ever_unknown();

-- Existing records: ever UNKNOWN by their timeline (an UNKNOWN outcome, an expired lease).
UPDATE intent_records r SET ever_unknown = true
WHERE r.status = 'UNKNOWN' OR r.resolution IS NOT NULL OR EXISTS (
  SELECT 1 FROM intent_events e
  WHERE e.tenant = r.tenant AND e.key = r.key
    AND (e.type = 'lease_expired' OR (e.type = 'outcome' AND e.data->>'outcome' = 'UNKNOWN')));

-- Rollup maintenance: a record created more than 60 s before the writing transaction started marks its
-- minute dirty (the refresh recomputes the last minutes by time, older ones by this queue). A plain
-- INSERT, never ON CONFLICT: a row not visible to the snapshot of the refresh is never deleted by it. The
-- claim and outcome of the hot path touch fresh records: WHEN is false and nothing is queued.
CREATE FUNCTION intent_records_mark_rollup_dirty() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO intent_rollup_dirty (tenant, tool, minute)
  VALUES (NEW.tenant, NEW.tool, date_trunc('minute', NEW.created_at, 'UTC'));
  RETURN NULL;
END
$$;

CREATE TRIGGER intent_records_rollup_dirty AFTER INSERT OR UPDATE ON intent_records FOR EACH ROW
  WHEN (NEW.created_at < now() - interval '60 seconds')
  EXECUTE FUNCTION intent_records_mark_rollup_dirty();

-- Never refreshed: every overview reads raw rows until the first refresh.
INSERT INTO intent_rollup_state (id, refreshed_to) VALUES (1, '1970-01-01T00:00:00Z');
