-- Retention deletes finished jobs oldest first, a small chunk at a time
-- (JobDeleteFinished): this index makes each chunk a range scan, whatever
-- the number of jobs kept.
CREATE INDEX jobs_finished ON jobs (finished_at) WHERE finished_at IS NOT NULL;
