-- Placeholder: this number belongs to the submitted event's migration
-- (jobs.submit_event_id), made on another branch. It changes nothing; the
-- merge replaces this file with that migration.
SELECT 1;
