-- Free-form tags on jobs and schedules (JSON arrays), for list filters.
ALTER TABLE jobs ADD COLUMN tags TEXT;
ALTER TABLE schedules ADD COLUMN tags TEXT;
