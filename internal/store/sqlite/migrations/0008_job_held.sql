-- A held job is set aside until released (POST /jobs/{id}/hold, /release).
ALTER TABLE jobs ADD COLUMN held INTEGER NOT NULL DEFAULT 0;
