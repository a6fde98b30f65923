-- A tenant's jobs by creation while they are unfinished only (internal/
-- store doc.go, "The hot row and its indexes"; sqlstore
-- Dialect.TenantUnfinished). The update that finishes a job is not HOT
-- (final_state and finished_at are indexed), so it gave every index of
-- jobs an entry for the new row version, jobs_tenant_created's among
-- them. A finished job is in jobs_tenant_final (tenant, final_state,
-- created_at, id) already: a tenant's listing with no state now merges
-- the newest page of jobs_tenant_unfinished with the newest page of each
-- terminal state there, as the listing of every job merges
-- jobs_unfinished with jobs_final, and the finish writes one entry fewer.
CREATE INDEX jobs_tenant_unfinished ON jobs (tenant, created_at, id) WHERE final_state IS NULL;
DROP INDEX jobs_tenant_created;
