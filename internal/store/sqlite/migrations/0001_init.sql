-- 0001_init: the first fairway schema. Times are INTEGER unix microseconds
-- (UTC), NULL when unset; durations are INTEGER milliseconds; JSON columns
-- are TEXT; booleans are INTEGER 0/1.

CREATE TABLE jobs (
    id                 TEXT    NOT NULL PRIMARY KEY,
    tenant             TEXT    NOT NULL,
    name               TEXT    NOT NULL DEFAULT '',
    type               TEXT    NOT NULL,
    lane               TEXT    NOT NULL DEFAULT '',
    key                TEXT    NOT NULL DEFAULT '',
    fairness_key       TEXT    NOT NULL DEFAULT '',
    priority           INTEGER NOT NULL,
    on_demand          INTEGER NOT NULL DEFAULT 0,
    milli_cpu          INTEGER NOT NULL DEFAULT 0,
    memory_mb          INTEGER NOT NULL DEFAULT 0,
    gpu                INTEGER NOT NULL DEFAULT 0,
    labels             TEXT,              -- JSON array of strings
    command            TEXT,              -- JSON array: argv
    env                TEXT,              -- JSON object
    dir                TEXT    NOT NULL DEFAULT '',
    payload            BLOB,
    idempotency_key    TEXT,              -- uniqueness lives in idempotency_keys
    state              TEXT    NOT NULL CHECK (state IN ('blocked', 'pending', 'leased',
                           'running', 'retry_wait', 'succeeded', 'failed', 'cancelled')),
    attempt            INTEGER NOT NULL DEFAULT 0,
    max_attempts       INTEGER NOT NULL DEFAULT 0,
    retry_kind         TEXT    NOT NULL DEFAULT '',
    retry_delay_ms     INTEGER NOT NULL DEFAULT 0,
    retry_max_delay_ms INTEGER NOT NULL DEFAULT 0,
    retry_jitter       INTEGER NOT NULL DEFAULT 0,
    retry_on           TEXT,              -- JSON array of failure classes
    timeout_ms         INTEGER NOT NULL DEFAULT 0,
    expected_ms        INTEGER NOT NULL DEFAULT 0,
    sla_policy         TEXT    NOT NULL DEFAULT '',
    run_at             INTEGER,
    depends_on         TEXT,              -- JSON array of {job_id, condition}
    schedule_id        TEXT,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER,
    enqueued_at        INTEGER,
    started_at         INTEGER,
    finished_at        INTEGER,
    worker_id          TEXT,
    lease_expires_at   INTEGER,
    cancel_requested   INTEGER NOT NULL DEFAULT 0,
    last_error         TEXT,
    exit_code          INTEGER,
    failure_class      TEXT,
    result             BLOB
) STRICT;

-- Listing, newest first, with or without tenant/state; the state indexes
-- also serve the start-up scan of unfinished jobs.
CREATE INDEX jobs_created ON jobs (created_at, id);
CREATE INDEX jobs_tenant_created ON jobs (tenant, created_at, id);
CREATE INDEX jobs_state_created ON jobs (state, created_at, id);
CREATE INDEX jobs_tenant_state_created ON jobs (tenant, state, created_at, id);
CREATE INDEX jobs_schedule ON jobs (schedule_id, created_at) WHERE schedule_id IS NOT NULL;

-- (tenant, key) -> job for IdempotencyWindow after created_at. A claim
-- older than the window is overwritten by the next claim of the key.
CREATE TABLE idempotency_keys (
    tenant     TEXT    NOT NULL,
    key        TEXT    NOT NULL,
    job_id     TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (tenant, key)
) STRICT, WITHOUT ROWID;

CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- One row per attempt.
CREATE TABLE executions (
    job_id            TEXT    NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    attempt           INTEGER NOT NULL,
    worker_id         TEXT,
    leased_at         INTEGER,
    started_at        INTEGER,
    finished_at       INTEGER,
    outcome           TEXT CHECK (outcome IN ('succeeded', 'failed', 'cancelled', 'lost', 'timeout')),
    exit_code         INTEGER,
    failure_class     TEXT,
    error             TEXT,
    duration_ms       INTEGER NOT NULL DEFAULT 0,
    sla_met           INTEGER,
    sla_violation_pct REAL    NOT NULL DEFAULT 0,
    PRIMARY KEY (job_id, attempt)
) STRICT, WITHOUT ROWID;

CREATE INDEX executions_finished ON executions (finished_at) WHERE finished_at IS NOT NULL;

CREATE TABLE log_chunks (
    job_id  TEXT    NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL,
    seq     INTEGER NOT NULL,
    stream  TEXT    NOT NULL CHECK (stream IN ('stdout', 'stderr')),
    at      INTEGER NOT NULL,
    data    BLOB    NOT NULL,
    PRIMARY KEY (job_id, attempt, seq)
) STRICT;

-- The audit trail. AUTOINCREMENT: ids are never reused, so readers can
-- follow the table by id.
CREATE TABLE events (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id  TEXT,
    attempt INTEGER NOT NULL DEFAULT 0,
    tenant  TEXT    NOT NULL DEFAULT '',
    type    TEXT    NOT NULL,
    at      INTEGER NOT NULL,
    actor   TEXT    NOT NULL DEFAULT '',
    detail  TEXT                            -- JSON
) STRICT;

CREATE INDEX events_job ON events (job_id, id) WHERE job_id IS NOT NULL;
CREATE INDEX events_tenant ON events (tenant, id);

CREATE TABLE workers (
    id            TEXT    NOT NULL PRIMARY KEY,
    name          TEXT    NOT NULL DEFAULT '',
    types         TEXT,                     -- JSON array
    labels        TEXT,                     -- JSON array
    slots         INTEGER NOT NULL DEFAULT 0,
    milli_cpu     INTEGER NOT NULL DEFAULT 0,
    memory_mb     INTEGER NOT NULL DEFAULT 0,
    gpu           INTEGER NOT NULL DEFAULT 0,
    state         TEXT    NOT NULL,
    registered_at INTEGER,
    last_seen_at  INTEGER
) STRICT;

CREATE TABLE schedules (
    id             TEXT    NOT NULL PRIMARY KEY,
    tenant         TEXT    NOT NULL,
    name           TEXT    NOT NULL DEFAULT '',
    spec           TEXT    NOT NULL,
    timezone       TEXT    NOT NULL DEFAULT '',
    template       TEXT,                    -- JSON job template
    misfire_policy TEXT    NOT NULL DEFAULT '',
    enabled        INTEGER NOT NULL DEFAULT 1,
    next_run_at    INTEGER,
    last_run_at    INTEGER,
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER
) STRICT;

CREATE INDEX schedules_tenant ON schedules (tenant, id);
CREATE INDEX schedules_due ON schedules (next_run_at) WHERE enabled = 1;

CREATE TABLE api_keys (
    key_hash   TEXT    NOT NULL PRIMARY KEY,
    tenant     TEXT    NOT NULL,
    role       TEXT    NOT NULL CHECK (role IN ('tenant', 'admin')),
    name       TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL
) STRICT;

CREATE INDEX api_keys_tenant ON api_keys (tenant, key_hash);
