-- A live attempt's event ids in columns no index holds (internal/store
-- doc.go, "The hot row and its indexes"): while a job is unfinished, its
-- live attempt's leased and started event ids are in live_lease_event_id
-- and live_start_event_id, so that the lease and the start, which write
-- them, change no indexed column (on PostgreSQL the UPDATE is HOT: no
-- index entry at all). The write that finishes the job moves them to
-- lease_event_id and start_event_id (jobs_live_events, jobs_start_event),
-- where the audit feed finds them; an attempt that ends with an execution
-- row leaves them to that row, as before. The running jobs already there
-- move their ids over, in this migration's transaction.
ALTER TABLE jobs ADD COLUMN live_lease_event_id BIGINT;
ALTER TABLE jobs ADD COLUMN live_start_event_id BIGINT;
UPDATE jobs SET live_lease_event_id = lease_event_id, lease_event_id = NULL,
    live_start_event_id = start_event_id, start_event_id = NULL
    WHERE final_state IS NULL AND (lease_event_id IS NOT NULL OR start_event_id IS NOT NULL);
