-- 0001_init: fairway's schema on PostgreSQL, equivalent to SQLite's
-- migrations 0001..0010. Encodings are the SQLite driver's (package
-- sqlstore): times BIGINT unix microseconds (UTC), NULL when unset;
-- durations BIGINT milliseconds; JSON documents TEXT.

CREATE TABLE jobs (
    id                 TEXT    NOT NULL PRIMARY KEY,
    tenant             TEXT    NOT NULL,
    name               TEXT    NOT NULL DEFAULT '',
    type               TEXT    NOT NULL,
    lane               TEXT    NOT NULL DEFAULT '',
    key                TEXT    NOT NULL DEFAULT '',
    fairness_key       TEXT    NOT NULL DEFAULT '',
    priority           BIGINT  NOT NULL,
    on_demand          BOOLEAN NOT NULL DEFAULT FALSE,
    milli_cpu          BIGINT  NOT NULL DEFAULT 0,
    memory_mb          BIGINT  NOT NULL DEFAULT 0,
    gpu                BIGINT  NOT NULL DEFAULT 0,
    labels             TEXT,
    command            TEXT,
    env                TEXT,
    dir                TEXT    NOT NULL DEFAULT '',
    payload            BYTEA,
    idempotency_key    TEXT,
    state              TEXT    NOT NULL CHECK (state IN ('blocked', 'pending', 'leased',
                           'running', 'retry_wait', 'succeeded', 'failed', 'cancelled')),
    attempt            BIGINT  NOT NULL DEFAULT 0,
    max_attempts       BIGINT  NOT NULL DEFAULT 0,
    retry_kind         TEXT    NOT NULL DEFAULT '',
    retry_delay_ms     BIGINT  NOT NULL DEFAULT 0,
    retry_max_delay_ms BIGINT  NOT NULL DEFAULT 0,
    retry_jitter       BOOLEAN NOT NULL DEFAULT FALSE,
    retry_on           TEXT,
    timeout_ms         BIGINT  NOT NULL DEFAULT 0,
    expected_ms        BIGINT  NOT NULL DEFAULT 0,
    sla_policy         TEXT    NOT NULL DEFAULT '',
    run_at             BIGINT,
    depends_on         TEXT,
    schedule_id        TEXT,
    created_at         BIGINT  NOT NULL,
    updated_at         BIGINT,
    enqueued_at        BIGINT,
    started_at         BIGINT,
    finished_at        BIGINT,
    worker_id          TEXT,
    lease_expires_at   BIGINT,
    cancel_requested   BOOLEAN NOT NULL DEFAULT FALSE,
    last_error         TEXT,
    exit_code          BIGINT,
    failure_class      TEXT,
    result             BYTEA,
    shell              BOOLEAN NOT NULL DEFAULT FALSE,
    returned_leases    BIGINT  NOT NULL DEFAULT 0 CHECK (returned_leases >= 0),
    output_limit       BIGINT  NOT NULL DEFAULT 0 CHECK (output_limit >= 0),
    scheduled_for      BIGINT,
    tags               TEXT,
    held               BOOLEAN NOT NULL DEFAULT FALSE,
    result_location    TEXT
);

CREATE INDEX jobs_created ON jobs (created_at, id);
CREATE INDEX jobs_tenant_created ON jobs (tenant, created_at, id);
CREATE INDEX jobs_state_created ON jobs (state, created_at, id);
CREATE INDEX jobs_tenant_state_created ON jobs (tenant, state, created_at, id);
CREATE INDEX jobs_schedule ON jobs (schedule_id, created_at) WHERE schedule_id IS NOT NULL;

CREATE TABLE idempotency_keys (
    tenant     TEXT   NOT NULL,
    key        TEXT   NOT NULL,
    job_id     TEXT   NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (tenant, key)
);

CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

CREATE TABLE executions (
    job_id            TEXT    NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    attempt           BIGINT  NOT NULL,
    worker_id         TEXT,
    leased_at         BIGINT,
    started_at        BIGINT,
    finished_at       BIGINT,
    outcome           TEXT CHECK (outcome IN ('succeeded', 'failed', 'cancelled', 'lost', 'timeout')),
    exit_code         BIGINT,
    failure_class     TEXT,
    error             TEXT,
    duration_ms       BIGINT  NOT NULL DEFAULT 0,
    sla_met           BOOLEAN,
    sla_violation_pct DOUBLE PRECISION NOT NULL DEFAULT 0,
    result_state      TEXT CHECK (result_state IN ('pending', 'written', 'failed')),
    result_url        TEXT,
    result_error      TEXT,
    result_tries      BIGINT  NOT NULL DEFAULT 0,
    result_next_at    BIGINT,
    PRIMARY KEY (job_id, attempt)
);

CREATE INDEX executions_finished ON executions (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX executions_results_due ON executions (result_next_at) WHERE result_state = 'pending';

CREATE TABLE log_chunks (
    job_id  TEXT   NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    attempt BIGINT NOT NULL,
    seq     BIGINT NOT NULL,
    stream  TEXT   NOT NULL CHECK (stream IN ('stdout', 'stderr')),
    at      BIGINT NOT NULL,
    data    BYTEA  NOT NULL,
    PRIMARY KEY (job_id, attempt, seq)
);

CREATE TABLE events (
    id          BIGSERIAL PRIMARY KEY,
    job_id      TEXT,
    attempt     BIGINT NOT NULL DEFAULT 0,
    tenant      TEXT   NOT NULL DEFAULT '',
    type        TEXT   NOT NULL,
    at          BIGINT NOT NULL,
    actor       TEXT   NOT NULL DEFAULT '',
    detail      TEXT,
    schedule_id TEXT
);

CREATE INDEX events_job ON events (job_id, id) WHERE job_id IS NOT NULL;
CREATE INDEX events_tenant ON events (tenant, id);
CREATE INDEX events_schedule ON events (schedule_id, id) WHERE schedule_id IS NOT NULL;

CREATE TABLE workers (
    id            TEXT   NOT NULL PRIMARY KEY,
    name          TEXT   NOT NULL DEFAULT '',
    types         TEXT,
    labels        TEXT,
    slots         BIGINT NOT NULL DEFAULT 0,
    milli_cpu     BIGINT NOT NULL DEFAULT 0,
    memory_mb     BIGINT NOT NULL DEFAULT 0,
    gpu           BIGINT NOT NULL DEFAULT 0,
    state         TEXT   NOT NULL,
    registered_at BIGINT,
    last_seen_at  BIGINT,
    handlers      TEXT
);

CREATE TABLE schedules (
    id                TEXT    NOT NULL PRIMARY KEY,
    tenant            TEXT    NOT NULL,
    name              TEXT    NOT NULL DEFAULT '',
    spec              TEXT    NOT NULL,
    timezone          TEXT    NOT NULL DEFAULT '',
    template          TEXT,
    overlap           TEXT    NOT NULL DEFAULT '',
    enabled           BOOLEAN NOT NULL DEFAULT TRUE,
    next_run_at       BIGINT,
    last_run_at       BIGINT,
    created_at        BIGINT  NOT NULL,
    updated_at        BIGINT,
    catchup_window_ms BIGINT  NOT NULL DEFAULT 0 CHECK (catchup_window_ms >= 0),
    jitter_ms         BIGINT  NOT NULL DEFAULT 0 CHECK (jitter_ms >= 0),
    start_at          BIGINT,
    end_at            BIGINT,
    pause_note        TEXT    NOT NULL DEFAULT '',
    pause_on_failure  BOOLEAN NOT NULL DEFAULT FALSE,
    buffered          TEXT,
    tags              TEXT
);

CREATE INDEX schedules_tenant ON schedules (tenant, id);
CREATE INDEX schedules_due ON schedules (next_run_at) WHERE enabled;

CREATE TABLE api_keys (
    key_hash   TEXT   NOT NULL PRIMARY KEY,
    tenant     TEXT   NOT NULL,
    role       TEXT   NOT NULL CHECK (role IN ('tenant', 'admin')),
    name       TEXT   NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL
);

CREATE INDEX api_keys_tenant ON api_keys (tenant, key_hash);
