-- The finished attempt in the job row (package store's doc.go): the
-- attempt that ends a job is kept by the job's row instead of an
-- execution row. attempt_outcome is the marker (NULL: the row holds no
-- attempt); the columns jobs already has with the execution's meaning
-- (worker_id, leased_at, started_at, finished_at, exit_code,
-- failure_class, last_error and the event ids) are not repeated.
ALTER TABLE jobs ADD COLUMN attempt_outcome TEXT
    CHECK (attempt_outcome IN ('succeeded', 'failed', 'cancelled', 'lost', 'timeout'));
ALTER TABLE jobs ADD COLUMN attempt_wait_ms BIGINT;
ALTER TABLE jobs ADD COLUMN attempt_duration_ms BIGINT;
ALTER TABLE jobs ADD COLUMN attempt_sla_met BOOLEAN;
ALTER TABLE jobs ADD COLUMN attempt_sla_violation_pct DOUBLE PRECISION;
ALTER TABLE jobs ADD COLUMN attempt_cpu_user_us BIGINT;
ALTER TABLE jobs ADD COLUMN attempt_cpu_system_us BIGINT;
ALTER TABLE jobs ADD COLUMN attempt_peak_rss_bytes BIGINT;
ALTER TABLE jobs ADD COLUMN attempt_usage_source TEXT;
ALTER TABLE jobs ADD COLUMN end_event_id BIGINT;
-- The audit feed's way to the started and outcome events of live and
-- held attempts, "after id n" in order (jobs_live_events has the leased).
CREATE INDEX jobs_start_event ON jobs (start_event_id) WHERE start_event_id IS NOT NULL;
CREATE INDEX jobs_end_event ON jobs (end_event_id) WHERE end_event_id IS NOT NULL;
