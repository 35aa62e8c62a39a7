-- CreateEnum
CREATE TYPE "NotificationEventKind" AS ENUM ('human_queue', 'compensation_failed', 'evidence_contradicts', 'unknown_share', 'stale_pending', 'test');

-- CreateEnum
CREATE TYPE "NotificationChannelKind" AS ENUM ('webhook', 'slack', 'email');

-- CreateEnum
CREATE TYPE "NotificationDeliveryStatus" AS ENUM ('pending', 'delivered', 'failed');

-- CreateTable
CREATE TABLE "notification_channels" (
    "tenant" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "kind" "NotificationChannelKind" NOT NULL,
    "name" TEXT NOT NULL,
    "url" TEXT,
    "to" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "events" "NotificationEventKind"[],
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "secret" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "notification_channels_pkey" PRIMARY KEY ("tenant","id")
);

-- CreateTable
CREATE TABLE "notification_events" (
    "tenant" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "kind" "NotificationEventKind" NOT NULL,
    "subject" JSONB NOT NULL,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "fanned_out" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "notification_events_pkey" PRIMARY KEY ("tenant","id")
);

-- CreateTable
CREATE TABLE "notification_deliveries" (
    "tenant" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "channel_id" TEXT NOT NULL,
    "kind" "NotificationEventKind" NOT NULL,
    "event_ids" TEXT[],
    "status" "NotificationDeliveryStatus" NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "scheduled_at" TIMESTAMPTZ(3) NOT NULL,
    "next_attempt_at" TIMESTAMPTZ(3),
    "lease_until" TIMESTAMPTZ(3),
    "last_error" TEXT,
    "delivered_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "notification_deliveries_pkey" PRIMARY KEY ("tenant","id")
);

-- CreateTable
CREATE TABLE "notification_conditions" (
    "tenant" TEXT NOT NULL,
    "condition" TEXT NOT NULL,
    "active" BOOLEAN NOT NULL,
    "since" TIMESTAMPTZ(3) NOT NULL,
    "event_id" TEXT,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "notification_conditions_pkey" PRIMARY KEY ("tenant","condition")
);

-- CreateIndex
CREATE INDEX "notification_events_unfanned_idx" ON "notification_events"("tenant", "occurred_at", "id") WHERE (NOT fanned_out);

-- CreateIndex
CREATE INDEX "notification_deliveries_created_idx" ON "notification_deliveries"("tenant", "created_at", "id");

-- CreateIndex
CREATE INDEX "notification_deliveries_channel_slot_idx" ON "notification_deliveries"("tenant", "channel_id", "kind", "scheduled_at");

-- CreateIndex
CREATE INDEX "notification_deliveries_channel_created_idx" ON "notification_deliveries"("tenant", "channel_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "notification_deliveries_pending_idx" ON "notification_deliveries"("tenant", "next_attempt_at", "id") WHERE (status = 'pending'::"NotificationDeliveryStatus");

-- Hand-written below: what the Prisma schema cannot express.

-- The outbox's events raised by changes of intent records (issue 23 §3), written by the change's own
-- transaction (a rolled-back change raises nothing):
-- - evidence_contradicts: the record waits for a person because evidence contradicts a settled record
--   or a person's decision (reason code CONTRADICTING_EVIDENCE, rule 16; packages/core/src/
--   contradicting-evidence.ts) — it entered the queue with that reason, or the reason came while it waited;
-- - compensation_failed: a compensating or corrective record (step `compensate:<key>` / `correct:<key>`)
--   became failed as the rollups count it (`compensations_failed`): FAILED_NO_EFFECT or waiting for a
--   person, from neither.
--   A compensation refused before its record was written (its tool not in the catalog: the original's
--   `compensation.key` is "") has no record: the original entering the queue with reason
--   COMPENSATION_FAILED raises it instead;
-- - human_queue: any other record entered the human queue (needs_human false -> true, or inserted true);
--   a compensation waiting for a person is a failed compensation, said once as compensation_failed. (A
--   compensation whose record failed puts its original in the queue too, reason COMPENSATION_FAILED: that
--   raises human_queue, the person's task, beside the compensation's own compensation_failed.)
-- The executor's own notification calls (tools `tristate.notify.*`) raise nothing. The event id is
-- `nev_` + md5 of (tenant, key, version, kind): one change (one row version) raises one id, and writing
-- it again (a restored record, a repeated transaction) is a no-op. The WHEN clauses keep the hot path's
-- cost to a few column comparisons on the rows that do not qualify: an ordinary claim (PENDING, not in
-- the queue) or outcome (SUCCEEDED, UNKNOWN, FAILED_NO_EFFECT of a non-compensation step) never runs
-- the function.
CREATE FUNCTION intent_records_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  code TEXT := NEW.error->>'code';
  is_compensation BOOLEAN := NEW.step_id LIKE 'compensate:%' OR NEW.step_id LIKE 'correct:%';
  was_failed BOOLEAN := TG_OP = 'UPDATE' AND (OLD.status = 'FAILED_NO_EFFECT' OR OLD.needs_human);
  event_kind "NotificationEventKind";
BEGIN
  IF NEW.needs_human AND code = 'CONTRADICTING_EVIDENCE'
     AND (TG_OP = 'INSERT' OR NOT OLD.needs_human OR (OLD.error->>'code') IS DISTINCT FROM code) THEN
    event_kind := 'evidence_contradicts';
  ELSIF is_compensation AND (NEW.status = 'FAILED_NO_EFFECT' OR NEW.needs_human) AND NOT was_failed THEN
    event_kind := 'compensation_failed';
  ELSIF NEW.needs_human AND NOT is_compensation AND (TG_OP = 'INSERT' OR NOT OLD.needs_human)
     AND code = 'COMPENSATION_FAILED' AND coalesce(NEW.compensation->>'key', '') = '' THEN
    -- The compensation was refused before its record was written (no record to raise it): the
    -- original, entering the queue for it, raises it.
    event_kind := 'compensation_failed';
  ELSIF NEW.needs_human AND NOT is_compensation AND (TG_OP = 'INSERT' OR NOT OLD.needs_human) THEN
    event_kind := 'human_queue';
  ELSE
    RETURN NULL;
  END IF;
  INSERT INTO notification_events (tenant, id, kind, subject, occurred_at)
  VALUES (NEW.tenant, 'nev_' || md5(NEW.tenant || '/' || NEW.key || '/' || NEW.version || '/' || event_kind),
    event_kind,
    jsonb_build_object('key', NEW.key, 'runId', NEW.run_id, 'stepId', NEW.step_id, 'tool', NEW.tool,
      'attempt', NEW.attempt, 'status', NEW.status, 'needsHuman', NEW.needs_human, 'code', code,
      'message', left(NEW.error->>'message', 500),
      'compensatedKey', CASE WHEN is_compensation THEN substr(NEW.step_id, strpos(NEW.step_id, ':') + 1)
        WHEN event_kind = 'compensation_failed' THEN NEW.key END),
    now())
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END
$$;

CREATE TRIGGER intent_records_notify_insert AFTER INSERT ON intent_records FOR EACH ROW
  WHEN ((NEW.needs_human
      OR (NEW.status = 'FAILED_NO_EFFECT' AND (NEW.step_id LIKE 'compensate:%' OR NEW.step_id LIKE 'correct:%')))
    AND NEW.tool NOT LIKE 'tristate.notify.%')
  EXECUTE FUNCTION intent_records_notify();

CREATE TRIGGER intent_records_notify_update AFTER UPDATE ON intent_records FOR EACH ROW
  WHEN ((((NEW.needs_human AND NOT OLD.needs_human)
      OR (NEW.needs_human AND (NEW.error->>'code') = 'CONTRADICTING_EVIDENCE'
        AND (OLD.error->>'code') IS DISTINCT FROM 'CONTRADICTING_EVIDENCE')
      OR (NEW.status = 'FAILED_NO_EFFECT' AND OLD.status <> 'FAILED_NO_EFFECT'
        AND (NEW.step_id LIKE 'compensate:%' OR NEW.step_id LIKE 'correct:%')))
    AND NEW.tool NOT LIKE 'tristate.notify.%'))
  EXECUTE FUNCTION intent_records_notify();
