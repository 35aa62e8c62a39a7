-- AlterTable
ALTER TABLE "intent_rollups" ADD COLUMN     "compensations_failed" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "compensations_run" INTEGER NOT NULL DEFAULT 0;

-- Hand-written below (moved above the DropIndex, which Prisma wrote first, so the backfill still has
-- the compensated index): what the Prisma schema cannot express.

-- Existing rollups, every level: compensations run and failed of their compensated records (hot and
-- archived), as the refresh counts them (COMPENSATION_FAILED_SQL in rollups/record-facts.ts).
UPDATE intent_rollups u SET compensations_run = x.run, compensations_failed = x.failed
FROM (
  SELECT r.tenant, r.tool, l.ms AS bucket_ms,
    date_bin(l.ms * interval '1 millisecond', r.created_at, TIMESTAMPTZ 'epoch') AS bucket_start,
    count(*)::int AS run,
    count(*) FILTER (WHERE NOT EXISTS (
      SELECT 1 FROM intent_records c WHERE c.tenant = r.tenant AND c.key = r.compensation->>'key'
        AND c.status <> 'FAILED_NO_EFFECT' AND NOT c.needs_human
      UNION ALL
      SELECT 1 FROM intent_records_archive c WHERE c.tenant = r.tenant AND c.key = r.compensation->>'key'
        AND c.status <> 'FAILED_NO_EFFECT' AND NOT c.needs_human))::int AS failed
  FROM (SELECT tenant, tool, created_at, compensation FROM intent_records WHERE compensation ? 'key'
        UNION ALL
        SELECT tenant, tool, created_at, compensation FROM intent_records_archive WHERE compensation ? 'key') r
  CROSS JOIN unnest(ARRAY[60000, 600000, 3600000, 21600000, 86400000]) AS l(ms)
  GROUP BY 1, 2, 3, 4
) x
WHERE u.tenant = x.tenant AND u.bucket_ms = x.bucket_ms AND u.bucket_start = x.bucket_start AND u.tool = x.tool;

-- A compensated record's count of failed compensations depends on its compensation's record (step id
-- `compensate:<key>` or `correct:<key>`, reserved for the executor): when that record is written
-- (inserted, or its status or needs_human changes), the compensated record's minute (hot or archived)
-- is queued for the rollup refresh, whatever its age. Agents' records never match the WHEN clause, so
-- the hot path of an ordinary call pays nothing; a compensating call pays one primary-key probe per
-- table and one queue row.
CREATE FUNCTION intent_records_mark_compensated_dirty() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  original TEXT := substr(NEW.step_id, strpos(NEW.step_id, ':') + 1);
BEGIN
  INSERT INTO intent_rollup_dirty (tenant, tool, minute)
  SELECT r.tenant, r.tool, date_trunc('minute', r.created_at, 'UTC') FROM intent_records r
  WHERE r.tenant = NEW.tenant AND r.key = original
  UNION ALL
  SELECT r.tenant, r.tool, date_trunc('minute', r.created_at, 'UTC') FROM intent_records_archive r
  WHERE r.tenant = NEW.tenant AND r.key = original;
  RETURN NULL;
END
$$;

CREATE TRIGGER intent_records_compensation_dirty_insert AFTER INSERT ON intent_records FOR EACH ROW
  WHEN (NEW.step_id LIKE 'compensate:%' OR NEW.step_id LIKE 'correct:%')
  EXECUTE FUNCTION intent_records_mark_compensated_dirty();

CREATE TRIGGER intent_records_compensation_dirty_update AFTER UPDATE ON intent_records FOR EACH ROW
  WHEN ((NEW.step_id LIKE 'compensate:%' OR NEW.step_id LIKE 'correct:%')
    AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.needs_human IS DISTINCT FROM NEW.needs_human))
  EXECUTE FUNCTION intent_records_mark_compensated_dirty();

-- DropIndex (the compensations count is read from the rollups now)
DROP INDEX "intent_records_compensated_idx";
