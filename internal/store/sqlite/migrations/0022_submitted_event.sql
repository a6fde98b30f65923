-- The submitted event in the job row (package store's doc.go): a job's
-- submitted event is no row of its own. The job row holds its id (from
-- the events' sequence, like the attempt events), its actor, and the
-- priority it was submitted with once a reprioritize changed it (NULL:
-- the job's priority). Jobs written before keep their submitted row
-- (NULL id).
ALTER TABLE jobs ADD COLUMN submit_event_id INTEGER;
ALTER TABLE jobs ADD COLUMN submit_actor TEXT;
ALTER TABLE jobs ADD COLUMN submit_priority INTEGER;
-- The audit feed's way to them, "after id n" in order; written once, by
-- the insert.
CREATE INDEX jobs_submit_event ON jobs (submit_event_id) WHERE submit_event_id IS NOT NULL;
