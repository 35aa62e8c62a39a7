-- Hand-written (triggers are outside the Prisma schema): records created more than 10 s (was 60 s)
-- before the writing transaction started queue their minute for the rollup refresh, so the overview
-- reads only the last 20 s (and the ragged minute) raw instead of the last 2 minutes.
DROP TRIGGER intent_records_rollup_dirty ON intent_records;

CREATE TRIGGER intent_records_rollup_dirty AFTER INSERT OR UPDATE ON intent_records FOR EACH ROW
  WHEN (NEW.created_at < now() - interval '10 seconds')
  EXECUTE FUNCTION intent_records_mark_rollup_dirty();
