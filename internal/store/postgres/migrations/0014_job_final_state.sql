-- The hot row and its indexes (internal/store doc.go): no index of jobs
-- holds a column that changes while a job is unfinished, and pages keep
-- room for a new row version, so that a lease or a start is a HOT update
-- (no index entry). final_state is the terminal state, NULL while the job
-- is unfinished; every statement that writes state writes it too.
-- Unfinished jobs are listed from the leader's memory. Fillfactor 50: the
-- dispatcher leases many jobs of one page in one transaction, whose
-- replaced versions cannot be pruned before it commits, so a page keeps
-- room for a new version of each of its rows (a drain of 20,000 jobs:
-- 41% of the leases HOT at fillfactor 70, 91% at 50).
ALTER TABLE jobs ADD COLUMN final_state TEXT
    CHECK (final_state IS NULL OR final_state IN ('succeeded', 'failed', 'cancelled'));
UPDATE jobs SET final_state = state WHERE state IN ('succeeded', 'failed', 'cancelled');
ALTER TABLE jobs SET (fillfactor = 50);
DROP INDEX jobs_state_created;
DROP INDEX jobs_tenant_state_created;
-- The rebuild at lead reads every unfinished job through this index.
CREATE INDEX jobs_unfinished ON jobs (created_at, id) WHERE final_state IS NULL;
-- Listing finished jobs by state, newest first: written once, at finish.
CREATE INDEX jobs_final ON jobs (final_state, created_at, id) WHERE final_state IS NOT NULL;
CREATE INDEX jobs_tenant_final ON jobs (tenant, final_state, created_at, id) WHERE final_state IS NOT NULL;
