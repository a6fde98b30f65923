-- job_specs without its foreign key to jobs (package postgres doc.go,
-- "The spec without a foreign key"). The key was checked by an RI trigger
-- at every spec inserted: a query that took the job's row just inserted
-- FOR KEY SHARE, a tuple lock that writes WAL and dirties the page, about
-- a twentieth of the writer's CPU. It guarded nothing the store can do: a
-- spec is inserted only in the statement or transaction that inserts its
-- job, and its ON DELETE CASCADE is now the store's statement that deletes
-- a job (Dialect.JobDelete), which deletes the spec by its key in the
-- same statement.
--
-- The constraint's name is looked up, not assumed: 0019 let PostgreSQL
-- name it. Only the constraint of job_specs that references jobs goes;
-- the table's primary key stays, and so do the foreign keys of
-- executions, events, log chunks and unique claims.
DO $$
DECLARE
    c NAME;
BEGIN
    FOR c IN
        SELECT conname FROM pg_constraint
        WHERE conrelid = 'job_specs'::regclass AND contype = 'f' AND confrelid = 'jobs'::regclass
    LOOP
        EXECUTE format('ALTER TABLE job_specs DROP CONSTRAINT %I', c);
    END LOOP;
END
$$;
