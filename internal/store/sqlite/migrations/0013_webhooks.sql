-- Alert webhooks registered through the admin API (the configuration
-- file's are not stored). The secret signs deliveries, so it is kept.
CREATE TABLE webhooks (
    name       TEXT    NOT NULL PRIMARY KEY,
    url        TEXT    NOT NULL,
    secret     TEXT    NOT NULL,
    kinds      TEXT,
    tenants    TEXT,
    created_at INTEGER NOT NULL,
    created_by TEXT    NOT NULL
) STRICT;
