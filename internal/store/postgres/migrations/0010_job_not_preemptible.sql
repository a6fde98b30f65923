-- A job submitted with preemptible: false is never stopped for a job of
-- higher priority (docs/scheduling.md, "Preemption").
ALTER TABLE jobs ADD COLUMN not_preemptible BOOLEAN NOT NULL DEFAULT FALSE;
