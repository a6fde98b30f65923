-- Leases handed back without the job having run (a worker drained before
-- starting it, or the lease never reached the worker across a server
-- crash). They are not charged against max_attempts.
ALTER TABLE jobs ADD COLUMN returned_leases INTEGER NOT NULL DEFAULT 0 CHECK (returned_leases >= 0);
