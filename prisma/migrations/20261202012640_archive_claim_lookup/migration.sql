-- DropIndex
DROP INDEX "intent_records_archive_run_idx";

-- CreateIndex
CREATE INDEX "intent_records_archive_run_step_idx" ON "intent_records_archive"("tenant", "run_id", "step_id", "tool");

-- Rule 15: a claim finds a step the archive holds (its statement looks there before inserting). One
-- race is left to close: the archiver deletes the live row and commits after the claim's snapshot was
-- taken, the claim's INSERT waits for that delete, then inserts (the conflicting row is gone) while its
-- snapshot still misses the archived copy. This function runs on each inserted row, after the insert,
-- and looks again with a fresh snapshot (a VOLATILE function gets one per query under READ COMMITTED):
-- when the archive now holds the same key or (run, step, tool), it rolls the claim back (SQLSTATE
-- 40001 with this hint), and the store claims again, finding the archived record.
CREATE FUNCTION tristate_claim_unarchived(p_tenant text, p_key text, p_run text, p_step text, p_tool text)
  RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM intent_records_archive a WHERE a.tenant = p_tenant AND a.key = p_key)
     OR EXISTS (SELECT 1 FROM intent_records_archive a
                WHERE a.tenant = p_tenant AND a.run_id = p_run AND a.step_id = p_step AND a.tool = p_tool) THEN
    RAISE EXCEPTION 'claim of % raced the archive', p_key
      USING ERRCODE = '40001', HINT = 'tristate: claim raced the archive; claim again';
  END IF;
  RETURN true;
END
$$;
