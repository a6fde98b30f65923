-- Keys created through the admin API: worker keys too, who created each,
-- and when it expires (NULL: never).
ALTER TABLE api_keys DROP CONSTRAINT api_keys_role_check;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_role_check CHECK (role IN ('tenant', 'admin', 'worker'));
ALTER TABLE api_keys ADD COLUMN created_by TEXT NOT NULL DEFAULT '';
ALTER TABLE api_keys ADD COLUMN expires_at BIGINT;
