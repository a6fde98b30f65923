-- Attempt history in the execution row (package store's doc.go): the
-- leased, started and outcome events of an attempt are no rows of their
-- own. The job row holds the live attempt's leased and started events;
-- the execution row takes them over, with the outcome event, when the
-- attempt ends. Ids come from the events' sequence (sqlite_sequence),
-- which the writer raises past every synthesised id.
ALTER TABLE jobs ADD COLUMN lease_event_id INTEGER;
ALTER TABLE jobs ADD COLUMN leased_at INTEGER;
ALTER TABLE jobs ADD COLUMN start_event_id INTEGER;
ALTER TABLE jobs ADD COLUMN start_event_at INTEGER;
-- Live attempts only: small, and the audit feed's way to them.
CREATE INDEX jobs_live_events ON jobs (lease_event_id) WHERE lease_event_id IS NOT NULL;

ALTER TABLE executions ADD COLUMN lease_event_id INTEGER;
ALTER TABLE executions ADD COLUMN start_event_id INTEGER;
ALTER TABLE executions ADD COLUMN start_event_at INTEGER;
ALTER TABLE executions ADD COLUMN end_event_id INTEGER;
-- The audit feed's way to the synthesised events, "after id n" in order.
CREATE INDEX executions_lease_event ON executions (lease_event_id) WHERE lease_event_id IS NOT NULL;
CREATE INDEX executions_start_event ON executions (start_event_id) WHERE start_event_id IS NOT NULL;
CREATE INDEX executions_end_event ON executions (end_event_id) WHERE end_event_id IS NOT NULL;

-- The sequence exists from now on, so that raising it is one UPDATE.
INSERT INTO sqlite_sequence (name, seq)
    SELECT 'events', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'events');
