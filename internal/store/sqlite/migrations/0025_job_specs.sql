-- The narrow hot row (internal/store doc.go, "The hot row and its
-- indexes"): a job's spec, the columns that no state change writes, moves
-- to job_specs, one row a job written by the job's insert in the same
-- transaction, so that a lease, a start or a finish no longer rewrites
-- the command, environment and payload with the row. Deleting a job
-- deletes its spec (ON DELETE CASCADE). The key is job_id, so that no
-- column name is in both tables.
--
-- SQLite drops a column with a rewrite of the table each: 26 of them.
CREATE TABLE job_specs (
    job_id             TEXT    NOT NULL PRIMARY KEY REFERENCES jobs (id) ON DELETE CASCADE,
    name               TEXT    NOT NULL DEFAULT '',
    key                TEXT    NOT NULL DEFAULT '',
    fairness_key       TEXT    NOT NULL DEFAULT '',
    on_demand          INTEGER NOT NULL DEFAULT 0,
    labels             TEXT,
    command            TEXT,
    env                TEXT,
    dir                TEXT    NOT NULL DEFAULT '',
    payload            BLOB,
    idempotency_key    TEXT,
    retry_kind         TEXT    NOT NULL DEFAULT '',
    retry_delay_ms     INTEGER NOT NULL DEFAULT 0,
    retry_max_delay_ms INTEGER NOT NULL DEFAULT 0,
    retry_jitter       INTEGER NOT NULL DEFAULT 0,
    retry_on           TEXT,
    sla_policy         TEXT    NOT NULL DEFAULT '',
    depends_on         TEXT,
    shell              INTEGER NOT NULL DEFAULT 0 CHECK (shell IN (0, 1)),
    output_limit       INTEGER NOT NULL DEFAULT 0 CHECK (output_limit >= 0),
    scheduled_for      INTEGER,
    tags               TEXT,
    result_location    TEXT,
    not_preemptible    INTEGER NOT NULL DEFAULT 0,
    trace_parent       TEXT,
    unique_rule        TEXT,
    max_snoozes        INTEGER NOT NULL DEFAULT 0
) STRICT;
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
ALTER TABLE jobs DROP COLUMN name;
ALTER TABLE jobs DROP COLUMN key;
ALTER TABLE jobs DROP COLUMN fairness_key;
ALTER TABLE jobs DROP COLUMN on_demand;
ALTER TABLE jobs DROP COLUMN labels;
ALTER TABLE jobs DROP COLUMN command;
ALTER TABLE jobs DROP COLUMN env;
ALTER TABLE jobs DROP COLUMN dir;
ALTER TABLE jobs DROP COLUMN payload;
ALTER TABLE jobs DROP COLUMN idempotency_key;
ALTER TABLE jobs DROP COLUMN retry_kind;
ALTER TABLE jobs DROP COLUMN retry_delay_ms;
ALTER TABLE jobs DROP COLUMN retry_max_delay_ms;
ALTER TABLE jobs DROP COLUMN retry_jitter;
ALTER TABLE jobs DROP COLUMN retry_on;
ALTER TABLE jobs DROP COLUMN sla_policy;
ALTER TABLE jobs DROP COLUMN depends_on;
ALTER TABLE jobs DROP COLUMN shell;
ALTER TABLE jobs DROP COLUMN output_limit;
ALTER TABLE jobs DROP COLUMN scheduled_for;
ALTER TABLE jobs DROP COLUMN tags;
ALTER TABLE jobs DROP COLUMN result_location;
ALTER TABLE jobs DROP COLUMN not_preemptible;
ALTER TABLE jobs DROP COLUMN trace_parent;
ALTER TABLE jobs DROP COLUMN unique_rule;
ALTER TABLE jobs DROP COLUMN max_snoozes;
