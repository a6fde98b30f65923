-- An attempt's wait, from becoming ready to its lease, in milliseconds
-- (NULL: not known), and an index to bucket attempts by their lease time
-- for the overview's wait chart (GET /api/v1/series). leased_at never
-- changes after the lease, so the index costs one entry per attempt.
ALTER TABLE executions ADD COLUMN wait_ms BIGINT;
CREATE INDEX executions_leased ON executions (leased_at, wait_ms) WHERE leased_at IS NOT NULL;
