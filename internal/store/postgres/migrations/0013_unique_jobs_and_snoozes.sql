-- Unique jobs (store package doc, "Unique jobs"). A job's unique rule is
-- kept with it as JSON; unique_claims binds (tenant, hash of the rule's
-- fields) to the job that claimed it last. Whether the claim still binds
-- is decided at the next claim from the holder's state and creation time,
-- so no transition writes here. A claim goes with its job.
ALTER TABLE jobs ADD COLUMN unique_rule TEXT;

CREATE TABLE unique_claims (
    tenant      TEXT   NOT NULL,
    unique_hash TEXT   NOT NULL,
    job_id      TEXT   NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (tenant, unique_hash)
);

CREATE INDEX unique_claims_job ON unique_claims (job_id);

-- Snoozes (docs/worker.md, "Snooze"): attempts a handler ended with "come
-- back later", uncharged; max_snoozes caps them (0: the server's default).
ALTER TABLE jobs ADD COLUMN snoozes BIGINT NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN max_snoozes BIGINT NOT NULL DEFAULT 0;
