-- Attempt history in the execution row (package store's doc.go): the
-- leased, started and outcome events of an attempt are no rows of their
-- own. The job row holds the live attempt's leased and started events;
-- the execution row takes them over, with the outcome event, when the
-- attempt ends. Ids come from the events' sequence (events_id_seq),
-- which the writer raises past every synthesised id.
ALTER TABLE jobs ADD COLUMN lease_event_id BIGINT;
ALTER TABLE jobs ADD COLUMN leased_at BIGINT;
ALTER TABLE jobs ADD COLUMN start_event_id BIGINT;
ALTER TABLE jobs ADD COLUMN start_event_at BIGINT;
-- Live attempts only: small, and the audit feed's way to them.
CREATE INDEX jobs_live_events ON jobs (lease_event_id) WHERE lease_event_id IS NOT NULL;

ALTER TABLE executions ADD COLUMN lease_event_id BIGINT;
ALTER TABLE executions ADD COLUMN start_event_id BIGINT;
ALTER TABLE executions ADD COLUMN start_event_at BIGINT;
ALTER TABLE executions ADD COLUMN end_event_id BIGINT;
-- The audit feed's way to the synthesised events, "after id n" in order.
CREATE INDEX executions_lease_event ON executions (lease_event_id) WHERE lease_event_id IS NOT NULL;
CREATE INDEX executions_start_event ON executions (start_event_id) WHERE start_event_id IS NOT NULL;
CREATE INDEX executions_end_event ON executions (end_event_id) WHERE end_event_id IS NOT NULL;

