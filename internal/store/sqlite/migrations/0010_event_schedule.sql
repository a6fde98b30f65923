-- The schedule an event belongs to (created, paused, missed slots, fired,
-- ...), so that a schedule's history is one indexed range.
ALTER TABLE events ADD COLUMN schedule_id TEXT;
CREATE INDEX events_schedule ON events (schedule_id, id) WHERE schedule_id IS NOT NULL;
