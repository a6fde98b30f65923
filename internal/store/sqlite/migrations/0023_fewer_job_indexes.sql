-- The hot row and its indexes (internal/store doc.go): a listing with no
-- state merges the unfinished jobs (jobs_unfinished) with each terminal
-- state's (jobs_final), both newest first, so (created_at, id) over every
-- job is an index no query needs, and an entry every insert wrote.
DROP INDEX IF EXISTS jobs_created;
