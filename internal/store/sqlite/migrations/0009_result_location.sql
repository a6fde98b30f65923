-- Where a job's output goes when an attempt ends (a URL), and on each
-- execution the state of that attempt's upload.
ALTER TABLE jobs ADD COLUMN result_location TEXT;
ALTER TABLE executions ADD COLUMN result_state TEXT CHECK (result_state IN ('pending', 'written', 'failed'));
ALTER TABLE executions ADD COLUMN result_url TEXT;
ALTER TABLE executions ADD COLUMN result_error TEXT;
ALTER TABLE executions ADD COLUMN result_tries INTEGER NOT NULL DEFAULT 0;
ALTER TABLE executions ADD COLUMN result_next_at INTEGER;
CREATE INDEX executions_results_due ON executions (result_next_at) WHERE result_state = 'pending';
