-- The narrow hot row (internal/store doc.go, "The hot row and its
-- indexes"): a job's spec, the columns that no state change writes, moves
-- to job_specs, one row a job written by the job's insert in the same
-- transaction, so that a lease, a start or a finish no longer rewrites
-- the command, environment and payload with the row. Deleting a job
-- deletes its spec (ON DELETE CASCADE). The key is job_id, so that no
-- column name is in both tables.
--
-- PostgreSQL drops the columns from the catalog only: the rows written
-- before keep their bytes until they are next written or deleted.
CREATE TABLE job_specs (
    job_id             TEXT    NOT NULL PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
    name               TEXT    NOT NULL DEFAULT '',
    key                TEXT    NOT NULL DEFAULT '',
    fairness_key       TEXT    NOT NULL DEFAULT '',
    on_demand          BOOLEAN NOT NULL DEFAULT FALSE,
    labels             TEXT,
    command            TEXT,
    env                TEXT,
    dir                TEXT    NOT NULL DEFAULT '',
    payload            BYTEA,
    idempotency_key    TEXT,
    retry_kind         TEXT    NOT NULL DEFAULT '',
    retry_delay_ms     BIGINT  NOT NULL DEFAULT 0,
    retry_max_delay_ms BIGINT  NOT NULL DEFAULT 0,
    retry_jitter       BOOLEAN NOT NULL DEFAULT FALSE,
    retry_on           TEXT,
    sla_policy         TEXT    NOT NULL DEFAULT '',
    depends_on         TEXT,
    shell              BOOLEAN NOT NULL DEFAULT FALSE,
    output_limit       BIGINT  NOT NULL DEFAULT 0 CHECK (output_limit >= 0),
    scheduled_for      BIGINT,
    tags               TEXT,
    result_location    TEXT,
    not_preemptible    BOOLEAN NOT NULL DEFAULT FALSE,
    trace_parent       TEXT,
    unique_rule        TEXT,
    max_snoozes        BIGINT  NOT NULL DEFAULT 0
);
INSERT INTO job_specs (
    job_id, name, key, fairness_key, on_demand, labels, command, env, dir, payload, idempotency_key,
    retry_kind, retry_delay_ms, retry_max_delay_ms, retry_jitter, retry_on, sla_policy, depends_on,
    shell, output_limit, scheduled_for, tags, result_location, not_preemptible, trace_parent,
    unique_rule, max_snoozes)
SELECT
    id, name, key, fairness_key, on_demand, labels, command, env, dir, payload, idempotency_key,
    retry_kind, retry_delay_ms, retry_max_delay_ms, retry_jitter, retry_on, sla_policy, depends_on,
    shell, output_limit, scheduled_for, tags, result_location, not_preemptible, trace_parent,
    unique_rule, max_snoozes
FROM jobs;
ALTER TABLE jobs
    DROP COLUMN name,
    DROP COLUMN key,
    DROP COLUMN fairness_key,
    DROP COLUMN on_demand,
    DROP COLUMN labels,
    DROP COLUMN command,
    DROP COLUMN env,
    DROP COLUMN dir,
    DROP COLUMN payload,
    DROP COLUMN idempotency_key,
    DROP COLUMN retry_kind,
    DROP COLUMN retry_delay_ms,
    DROP COLUMN retry_max_delay_ms,
    DROP COLUMN retry_jitter,
    DROP COLUMN retry_on,
    DROP COLUMN sla_policy,
    DROP COLUMN depends_on,
    DROP COLUMN shell,
    DROP COLUMN output_limit,
    DROP COLUMN scheduled_for,
    DROP COLUMN tags,
    DROP COLUMN result_location,
    DROP COLUMN not_preemptible,
    DROP COLUMN trace_parent,
    DROP COLUMN unique_rule,
    DROP COLUMN max_snoozes;
