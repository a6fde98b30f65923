-- Keys created through the admin API: worker keys too, who created each,
-- and when it expires (NULL: never). SQLite cannot change a CHECK
-- constraint in place: the table is rebuilt.
CREATE TABLE api_keys_new (
    key_hash   TEXT    NOT NULL PRIMARY KEY,
    tenant     TEXT    NOT NULL,
    role       TEXT    NOT NULL CHECK (role IN ('tenant', 'admin', 'worker')),
    name       TEXT    NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL,
    created_by TEXT    NOT NULL DEFAULT '',
    expires_at INTEGER
) STRICT;
INSERT INTO api_keys_new (key_hash, tenant, role, name, created_at)
    SELECT key_hash, tenant, role, name, created_at FROM api_keys;
DROP TABLE api_keys;
ALTER TABLE api_keys_new RENAME TO api_keys;
CREATE INDEX api_keys_tenant ON api_keys (tenant, key_hash);
