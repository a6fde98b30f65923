-- Schedules as internal/schedule runs them: the overlap policy replaces
-- the misfire policy (a catch-up window now decides what a missed slot
-- does), with jitter, bounds, a pause note and the slots buffered behind
-- a running job (JSON array of unix microseconds).
ALTER TABLE schedules RENAME COLUMN misfire_policy TO overlap;
ALTER TABLE schedules ADD COLUMN catchup_window_ms INTEGER NOT NULL DEFAULT 0 CHECK (catchup_window_ms >= 0);
ALTER TABLE schedules ADD COLUMN jitter_ms INTEGER NOT NULL DEFAULT 0 CHECK (jitter_ms >= 0);
ALTER TABLE schedules ADD COLUMN start_at INTEGER;
ALTER TABLE schedules ADD COLUMN end_at INTEGER;
ALTER TABLE schedules ADD COLUMN pause_note TEXT NOT NULL DEFAULT '';
ALTER TABLE schedules ADD COLUMN pause_on_failure INTEGER NOT NULL DEFAULT 0;
ALTER TABLE schedules ADD COLUMN buffered TEXT;

-- A scheduled job's slot: its schedule (schedule_id) and nominal time.
ALTER TABLE jobs ADD COLUMN scheduled_for INTEGER;
