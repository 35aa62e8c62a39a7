-- Issue 19: waiting for a person is stored once, in `needs_human`; the resolution `needs_human` is no
-- longer a stored value (readers see it derived from `needs_human` by `shownResolution`).
BEGIN;

-- Hand-written: move the stored rows before the enum value goes. A record whose resolution said
-- `needs_human` waits in the human queue and has no resolution of its own yet.
UPDATE intent_records SET resolution = NULL, needs_human = true WHERE resolution = 'needs_human';
UPDATE intent_records_archive SET resolution = NULL, needs_human = true WHERE resolution = 'needs_human';
-- The operator audit's snapshots of records (JSON) say the same in the same shape.
UPDATE audit_entries SET before = before || '{"resolution": null, "needsHuman": true}'::jsonb
  WHERE before->>'resolution' = 'needs_human';
UPDATE audit_entries SET after = after || '{"resolution": null, "needsHuman": true}'::jsonb
  WHERE after->>'resolution' = 'needs_human';

-- The rollups' `open` now counts every record waiting for a person (it read the resolution, so a settled
-- record waiting for a correction was counted by its resolution): recount the minutes of those records.
INSERT INTO intent_rollup_dirty (tenant, tool, minute)
SELECT DISTINCT tenant, tool, date_trunc('minute', created_at, 'UTC') FROM intent_records
WHERE needs_human AND ever_unknown AND status IN ('SUCCEEDED', 'FAILED_NO_EFFECT');

-- The trigger's WHEN reads the column, whose type changes below: dropped and created again as it was.
DROP TRIGGER intent_records_ever_unknown ON intent_records;

-- AlterEnum
CREATE TYPE "Resolution_new" AS ENUM ('found', 'absent_resent', 'human_confirmed_effect', 'human_confirmed_no_effect', 'human_resent');
ALTER TABLE "intent_records" ALTER COLUMN "resolution" TYPE "Resolution_new" USING ("resolution"::text::"Resolution_new");
ALTER TABLE "intent_records_archive" ALTER COLUMN "resolution" TYPE "Resolution_new" USING ("resolution"::text::"Resolution_new");
ALTER TYPE "Resolution" RENAME TO "Resolution_old";
ALTER TYPE "Resolution_new" RENAME TO "Resolution";
DROP TYPE "public"."Resolution_old";

CREATE TRIGGER intent_records_ever_unknown BEFORE INSERT OR UPDATE ON intent_records FOR EACH ROW
  WHEN (NOT NEW.ever_unknown AND (NEW.status = 'UNKNOWN' OR NEW.resolution IS NOT NULL))
  EXECUTE FUNCTION intent_records_set_ever_unknown();

COMMIT;
